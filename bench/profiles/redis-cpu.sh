#!/usr/bin/env bash
# Redis CPU and commands per owner flight of adapter-loop.mjs, on a redis-server you started for it:
#   bash bench/profiles/redis-cpu.sh <port> <ioredis|node-redis|cache-manager> [flights]
# (run from the repository root after `pnpm exec turbo run build`; INFO cpu delta over the run ÷ flights,
# INFO commandstats reset before it). Alternate two checkouts' runs to compare them on a shared machine.
set -euo pipefail
port=$1 adapter=$2 flights=${3:-30000}
cpu() { redis-cli -p "$port" info cpu | awk -F: '/^used_cpu_(sys|user):/{s+=$2} END{printf "%.6f", s}'; }
redis-cli -p "$port" config resetstat >/dev/null
before=$(cpu)
out=$(REDIS_URL="redis://127.0.0.1:$port" node "$(dirname "$0")/adapter-loop.mjs" "$adapter" "$flights" 1)
after=$(cpu)
warm=$((flights < 5000 ? flights : 5000))
stats=$(redis-cli -p "$port" info commandstats | grep -E 'cmdstat_(evalsha|set|get):' | sed 's/cmdstat_//; s/,rejected.*//; s/usec=[0-9]*,//' | tr '\n' ' ')
echo "$out redisCpuUsPerFlight=$(echo "($after - $before) * 1000000 / ($flights + $warm)" | bc -l | cut -c1-5) $stats"
