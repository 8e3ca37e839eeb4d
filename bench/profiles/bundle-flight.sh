#!/bin/bash
# Bundles @flight/core and both Redis adapters from a source tree into one ESM file, for FLIGHT_BUNDLE=
# (adapter-loop.mjs, wakeup-trace.mjs): `bench/profiles/bundle-flight.sh <tree with packages/> <out dir>`
# writes <out dir>/flight.mjs and links <out dir>/node_modules to this checkout's packages (ioredis, redis, ...).
# Another commit's tree: `mkdir -p /tmp/x && git archive <commit> packages | tar -x -C /tmp/x`.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
tree=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
entry=$(mktemp --suffix=.ts -p "$out")
trap 'rm -f "$entry"' EXIT
cat > "$entry" <<EOT
export { createSingleFlight } from '$tree/packages/core/src/index.ts';
export { createIoredisCoordinator } from '$tree/packages/redis-ioredis/src/index.ts';
export { createNodeRedisCoordinator } from '$tree/packages/redis-node/src/index.ts';
EOT
esbuild=$(ls -d "$here"/node_modules/.pnpm/esbuild@*/node_modules/esbuild/bin/esbuild | tail -1)
"$esbuild" "$entry" --bundle --platform=node --format=esm --target=node20 --packages=external \
  --alias:@flight/core="$tree/packages/core/src/index.ts" --alias:@flight/redis-scripts="$tree/packages/redis-scripts/src/index.ts" \
  --outfile="$out/flight.mjs" --log-level=error
ln -sfn "$here/node_modules/.pnpm/node_modules" "$out/node_modules"
echo "$out/flight.mjs"
