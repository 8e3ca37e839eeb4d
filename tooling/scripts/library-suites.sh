#!/usr/bin/env bash
# Runs the library suites (every package of packages/) on each Node major given, side by side, each from
# the npm registry's `node` package (npx -p node@<major>), and fails when any run fails:
#   bash tooling/scripts/library-suites.sh 22 24
# The failover suites (sentinel, strict-ack) run in npm test only. On Node >= 24, @flight/openai is tested against openai 7 (FLIGHT_OPENAI_MAJOR=7).
set -uo pipefail
cd "$(dirname "$0")/../.."

# FLIGHT_LIBRARY_PROJECTS="core redis-scripts" runs only those (a quick check of this script).
names=${FLIGHT_LIBRARY_PROJECTS:-}
if [ -z "$names" ]; then
  for dir in packages/*/; do
    [ -f "$dir/vitest.config.ts" ] || continue
    names="$names $(sed -n "s/.*flightProject('\([^']*\)'.*/\1/p" "$dir/vitest.config.ts")"
  done
fi
projects=()
for name in $names; do projects+=(--project "$name"); done
# The failover suites start topologies of their own (Sentinels, a primary and a replica per test) and run in
# `npm test`; two more copies side by side only load the machine the other suites' processes share.
excludes=(--exclude '**/sentinel.test.ts' --exclude '**/strict-ack.test.ts')

logs=$(mktemp -d)
pids=()
for major in "$@"; do
  openai=6
  [ "$major" -ge 24 ] && openai=7
  echo "== library suites on Node $major (openai $openai):$names; log $logs/node$major.log"
  FLIGHT_OPENAI_MAJOR=$openai npx -y -p "node@$major" node node_modules/vitest/vitest.mjs run "${projects[@]}" "${excludes[@]}" \
    >"$logs/node$major.log" 2>&1 &
  pids+=($!)
done

status=0
for i in "${!pids[@]}"; do
  major=${*:i+1:1}
  code=0
  wait "${pids[$i]}" || code=$?
  # The finished log without its colour codes, for the summary line or the account of a failure.
  plain=$(sed 's/\x1b\[[0-9;]*m//g' "$logs/node$major.log")
  if [ "$code" -eq 0 ]; then
    echo "== Node $major: $(grep -a -E 'Test Files|Tests ' <<<"$plain" | tr -s ' ' | paste -sd ';')"
  else
    status=1
    echo "== Node $major: FAILED"
    # The failing tests by name, then vitest's own account of each failure (its "Failed Tests" and
    # "Unhandled Errors" sections run to the summary at the end of the log); a run that never got to report
    # (Node or vitest failed to start) shows the end of its log instead.
    grep -a -E '^ +× | FAIL ' <<<"$plain" | head -40
    report=$(sed -n '/⎯ \(Failed Tests\|Unhandled Error\)/,$p' <<<"$plain")
    if [ -n "$report" ]; then head -250 <<<"$report"; else tail -60 <<<"$plain"; fi
  fi
done
exit $status
