#!/bin/bash
# Two or more bundles of the owner path (bundle-flight.sh) alternated on one Redis: per round and bundle, one
# redis-cpu.sh run (the loop's client CPU and flights/s, Redis CPU per flight, µs per EVALSHA / SET / GET; a
# script's inner commands count in its own).
# `bench/profiles/ab-redis-cpu.sh <rounds> <ioredis|node-redis> <a.mjs> <b.mjs> ...`; PORT (default 6379).
set -euo pipefail
here=$(dirname "$0")
rounds=$1 adapter=$2
shift 2
for r in $(seq "$rounds"); do
  for bundle in "$@"; do
    echo "round $r $bundle $(FLIGHT_BUNDLE=$bundle bash "$here/redis-cpu.sh" "${PORT:-6379}" "$adapter" 40000)"
  done
done
