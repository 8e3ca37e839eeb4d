/**
 * CPU profile / µs-per-call loop of `SingleFlight.execute`:
 * `node --import tsx [--cpu-prof] bench/profiles/core-loop.ts local|distributed|ioredis|ioredis-raw [calls] [telemetry-off]`
 * (`distributed`: the in-memory coordinator; `ioredis`: the ioredis coordinator on REDIS_URL, default the
 * shared 127.0.0.1:6379, under a unique prefix; `ioredis-raw`: the owner's acquire + encode + complete on
 * that coordinator without SingleFlight, the floor the rest is measured against; `telemetry-off`: `telemetry: false`; otherwise the
 * OpenTelemetry API answers with no-op spans, no SDK).
 * Same policy as the bench's `local` contender (L1 off, guard extras off, 60 s timeout), 64 in flight,
 * distinct keys, an instant upstream returning one 1 KB object. `POLICY=default` keeps the stage's default
 * guard instead (retry, circuit breaker, bulkhead, 30 s timeout); L1 stays off.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type * as Core from '../../packages/core/src/index.ts';
import { createIoredisCoordinator } from '../../packages/redis-ioredis/src/index.ts';
import { makePayload } from '../src/payload.ts';
import { profileDefaults } from './profile-defaults.mjs';

// CORE_ENTRY: a built bundle of core to profile instead of the source (what the bench and users run: no
// keep-names helpers, which tsx adds to every closure of the source).
const { createEnvelopeCodec, createMemoryCoordinator, createSingleFlight }: typeof Core = await import(
  process.env.CORE_ENTRY ?? '../../packages/core/src/index.ts'
);

const arg = (process.argv[2] ?? 'local') as 'local' | 'distributed' | 'ioredis' | 'ioredis-raw';
const mode = arg === 'ioredis' || arg === 'ioredis-raw' ? 'distributed' : arg;
const calls = Number(process.argv[3] ?? 400_000);
const telemetry = process.argv[4] !== 'telemetry-off';
const client = arg.startsWith('ioredis') ? new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') : undefined;
const coordinator = client
  ? createIoredisCoordinator({ client, prefix: `prof-core-${process.pid}-${Date.now()}` })
  : mode === 'distributed'
    ? createMemoryCoordinator()
    : undefined;
const flight = createSingleFlight({
  mode,
  telemetry,
  coordinator,
  defaults: profileDefaults(process.env.POLICY === 'default' ? {} : undefined),
});
const payload = makePayload(1024);
const supplier = async () => payload;

const codec = createEnvelopeCodec();
const LEASE = { takeoverAfterMs: 9000, leaseTtlMs: 18_000, maxRunMs: 60_000 };
/** `ioredis-raw`: the owner's two coordinator calls (acquire, complete) and the codec, without SingleFlight: the floor. */
async function raw(key: string) {
  const { meta } = await coordinator!.acquire({
    stage: 'bench',
    key,
    ...LEASE,
    ownerId: 'raw',
    ownerToken: randomUUID(),
    startRunning: true,
  });
  const result = codec.encode(await supplier(), { maxBytes: 1 << 20 });
  await coordinator!.complete(
    { stage: 'bench', key, ownerId: 'raw', ownerToken: meta.ownerToken, epoch: meta.epoch },
    { result, resultTtlMs: 10_000 },
  );
}

async function loop(prefix: string, n: number) {
  let next = 0;
  const worker = async () => {
    if (arg === 'ioredis-raw') while (next < n) await raw(`${prefix}${next++}`);
    else while (next < n) await flight.execute('bench', `${prefix}${next++}`, supplier);
  };
  await Promise.all(Array.from({ length: 64 }, worker));
}

await loop('warm-', Math.min(50_000, calls / 4));
const start = process.hrtime.bigint();
const cpu = process.cpuUsage();
await loop('k-', calls);
const ns = Number(process.hrtime.bigint() - start);
const used = process.cpuUsage(cpu);
const naiveStart = process.hrtime.bigint();
let sink = 0;
for (let i = 0; i < calls; i++) sink += (await supplier()) ? 1 : 0;
const naiveNs = Number(process.hrtime.bigint() - naiveStart);
console.log(
  JSON.stringify({
    mode: arg,
    policy: process.env.POLICY ?? 'bench',
    telemetry,
    calls,
    usPerCall: +(ns / calls / 1000).toFixed(2),
    cpuUsPerCall: +((used.user + used.system) / calls).toFixed(2),
    opsPerSec: Math.round(calls / (ns / 1e9)),
    naiveUsPerCall: +(naiveNs / calls / 1000).toFixed(3),
    sink: sink === calls,
  }),
);
await flight.close();
await coordinator?.close();
client?.disconnect();
