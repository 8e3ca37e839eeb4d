#!/bin/bash
# Two bundles of the owner path (bundle-flight.sh) alternated on one Redis, per round and side: the loop's
# client CPU and flights/s (adapter-loop.mjs), the Redis CPU per flight (INFO cpu delta over the loop and its
# warm-up) and the µs per EVALSHA and per SET (INFO commandstats; a script's inner commands count in its own).
# `bench/profiles/ab-redis-cpu.sh <rounds> <ioredis|node-redis> <a.mjs> <b.mjs>`; PORT (default 6379).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
port=${PORT:-6379}
rounds=$1 adapter=$2
shift 2
cpu() { redis-cli -p "$port" info cpu | awk -F: '/used_cpu_(sys|user):/{s+=$2} END{printf "%.6f", s}'; }
stat() { redis-cli -p "$port" info commandstats | awk -F'[=,]' -v c="cmdstat_$1:calls" '$1==c{printf "%s", $6}'; }
for r in $(seq "$rounds"); do
  for bundle in "$@"; do
    redis-cli -p "$port" config resetstat >/dev/null
    before=$(cpu)
    out=$(FLIGHT_BUNDLE=$bundle REDIS_URL=redis://127.0.0.1:$port node "$here/bench/profiles/adapter-loop.mjs" "$adapter" 40000 1 | tail -1)
    after=$(cpu)
    echo "round $r $(basename "$(dirname "$(dirname "$bundle")")") $out redisCpuUsPerFlight=$(echo "($after-$before)*1000000/45000" | bc -l | cut -c1-5) evalshaUs=$(stat evalsha) setUs=$(stat set)"
  done
done
