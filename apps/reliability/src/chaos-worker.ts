/**
 * One node of the chaos run: createSingleFlight (hybrid) over the ioredis coordinator, with an upstream
 * whose only right answer is `v:<key>`. JSON lines in (requests) and out (replies, upstream calls,
 * unhandled rejections). Started by chaos-run.ts with `node --import tsx`.
 */
import { createInterface } from 'node:readline';
import { createSingleFlight, FlightError } from '@flight/core';
import { createIoredisCoordinator } from '@flight/redis-ioredis';

const config = JSON.parse(process.env.FLIGHT_CHAOS_NODE ?? '{}') as { url: string; nodeId: string; prefix: string };
const send = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);

process.on('unhandledRejection', (reason) => send({ event: 'unhandled', error: String(reason) }));
process.on('uncaughtException', (error) => {
  send({ event: 'unhandled', error: `uncaught: ${String(error)}` });
});

const coordinator = createIoredisCoordinator({ redis: { ...parse(config.url), maxRetriesPerRequest: 1 }, prefix: config.prefix, commandTimeoutMs: 500 });
const flight = createSingleFlight({
  coordinator,
  mode: 'hybrid',
  nodeId: config.nodeId,
  fallbackCooldownMs: 500,
  defaults: {
    heartbeatIntervalMs: 500,
    takeoverAfterMs: 1500,
    pollIntervalMs: 250,
    waitTimeoutMs: 8000,
    maxRunMs: 20_000,
    l1: { enabled: true, ttlMs: 5000 },
    guard: { retry: false, timeoutMs: 10_000, circuitBreaker: false, bulkhead: false },
  },
});

function parse(url: string) {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}

async function handle(request: { id: number; key: string; workMs: number }) {
  try {
    const result = await flight.execute('chaos', request.key, async (ctx) => {
      send({ event: 'upstream', key: request.key });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, request.workMs);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (ctx.signal.aborted) throw ctx.signal.reason;
      return `v:${request.key}`;
    });
    send({ id: request.id, ok: true, value: result.value, role: result.role });
  } catch (error) {
    send({ id: request.id, ok: false, code: error instanceof FlightError ? error.code : `untyped:${String(error)}` });
  }
}

send({ event: 'ready' });
for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line) as { op: 'request'; id: number; key: string; workMs: number } | { op: 'exit' };
  if (message.op === 'exit') break;
  void handle(message);
}
await flight.close();
await coordinator.close();
process.exit(0);
