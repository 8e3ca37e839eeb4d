#!/usr/bin/env bash
# Lists the processes that still carry the run marker FLIGHT_RUN_ID=<id> in their environment: every
# process a test run starts inherits it (daemonized redis-servers included), so whatever still has it once
# the run is over was left behind. Exits 1 (and prints them) when any survives, 0 otherwise.
#   usage: survivors.sh <id>
set -u
id="${1:?usage: survivors.sh <run id>}"
found=0
for env in /proc/[0-9]*/environ; do
  pid="${env#/proc/}"; pid="${pid%/environ}"
  [ "$pid" = "$$" ] && continue
  # This script's own helpers (tr, grep) carry the marker too: skip its children.
  ppid=$(awk '/^PPid:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
  [ "$ppid" = "$$" ] && continue
  if { tr '\0' '\n' <"$env"; } 2>/dev/null | grep -qx "FLIGHT_RUN_ID=$id"; then
    found=1
    echo "left behind: pid $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-200)"
  fi
done
exit $found
