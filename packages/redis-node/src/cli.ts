/** The `flight` command over node-redis (see `runFlightCli`): `npx flight list`. */
import { createRequire } from 'node:module';
import { runFlightCli } from '@flight/redis-scripts';
import { createClient, createCluster } from 'redis';
import { createNodeRedisCoordinator, type NodeRedisClient, type NodeRedisCluster } from './index';

// src/cli.ts and dist/cli.js both sit one folder below the package's manifest.
const manifest = createRequire(import.meta.url)('../package.json') as { name: string; version: string };
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());

process.exitCode = await runFlightCli(process.argv.slice(2), {
  connect({ urls, cluster, prefix }) {
    // No reconnection: an unreachable Redis fails the command at once.
    const socket = { reconnectStrategy: false as const, connectTimeout: 5000 };
    const client = cluster
      ? createCluster({ rootNodes: urls.map((url) => ({ url })), defaults: { socket } })
      : createClient({ url: urls[0], socket });
    client.on('error', () => undefined);
    const connected = client.connect();
    connected.catch(() => undefined);
    let closed = false;
    let coordinator: ReturnType<typeof createNodeRedisCoordinator> | undefined;
    const ready = connected.then(() => {
      if (closed) throw new Error('closed');
      return (coordinator = createNodeRedisCoordinator({
        client: client as unknown as NodeRedisClient | NodeRedisCluster,
        prefix,
        commandTimeoutMs: 5000,
      }));
    });
    ready.catch(() => undefined);
    const later = <T>(use: (c: NonNullable<typeof coordinator>) => Promise<T>) => ready.then(use);
    return {
      coordinator: {
        inspect: (stage, key) => later((c) => c.inspect(stage, key)),
        listFlights: (options) => later((c) => c.listFlights(options)),
        forget: (ref) => later((c) => c.forget(ref)),
      },
      async close() {
        closed = true;
        await connected.catch(() => undefined);
        await coordinator?.close();
        if (!client.isOpen) return;
        await client.close().catch(() => client.destroy());
      },
    };
  },
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  signal: stop.signal,
  version: `${manifest.name} ${manifest.version}`,
});
