/**
 * The parent chooses a child's port a moment before the child listens on it, and another process may take
 * it in between (an outbound connection's local port is enough): the child says so with its exit code and
 * the parent starts it again on a fresh port, instead of the demo or a test failing to start.
 */
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, onFreePorts, PortTakenError, startModelProcess, startNodeProcess, type Proc } from '../src/cluster.js';

let holder: net.Server;
let taken: number;
const started: Proc[] = [];

beforeAll(async () => {
  // Another process's server on the port: it hangs up on whoever connects (the parent's health checks).
  holder = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  taken = (holder.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()));
  await new Promise((resolve) => holder.close(resolve));
});

it('a model or node process whose port is taken exits with a typed error (E_DEMO_PORT_TAKEN), not a bare exit code', async () => {
  const model = startModelProcess({ port: taken });
  await expect(model).rejects.toBeInstanceOf(PortTakenError);
  await expect(model).rejects.toMatchObject({ code: 'E_DEMO_PORT_TAKEN' });
  const node = startNodeProcess({ nodeId: 'taken', port: taken, mode: 'local', redisUrl: 'memory', modelBaseUrl: 'http://127.0.0.1:1/v1' });
  await expect(node).rejects.toBeInstanceOf(PortTakenError);
}, 60_000);

it('onFreePorts starts the process again on a fresh port when the one it chose is taken', async () => {
  const tried: number[] = [];
  let picks = 0;
  const model = await onFreePorts(
    1,
    ([port]) => {
      tried.push(port!);
      return startModelProcess({ port: port! });
    },
    async () => (picks++ === 0 ? taken : freePort()),
  );
  started.push(model);
  expect(tried).toHaveLength(2);
  expect(tried[0]).toBe(taken);
  expect(model.port).toBe(tried[1]);
  expect((await fetch(`${model.url}/healthz`)).ok).toBe(true);
}, 60_000);

it('a failure other than a taken port is not retried', async () => {
  let attempts = 0;
  await expect(
    onFreePorts(1, async () => {
      attempts++;
      throw new Error('not a port problem');
    }),
  ).rejects.toThrow('not a port problem');
  expect(attempts).toBe(1);
});
