/** The `flight` command over ioredis (see `runFlightCli`): `npx flight list`. */
import { createRequire } from 'node:module';
import { runFlightCli } from '@flight/redis-scripts';
import { Cluster, Redis } from 'ioredis';
import { createIoredisCoordinator } from './index';

// src/cli.ts and dist/cli.js both sit one folder below the package's manifest.
const manifest = createRequire(import.meta.url)('../package.json') as { name: string; version: string };
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());

process.exitCode = await runFlightCli(process.argv.slice(2), {
  connect({ urls, cluster, prefix }) {
    // One try per command: an unreachable Redis fails the command at once instead of retrying forever.
    const options = { maxRetriesPerRequest: 1, retryStrategy: () => null, lazyConnect: false };
    const client = cluster
      ? new Cluster(
          urls.map((url) => ({ host: new URL(url).hostname, port: Number(new URL(url).port || 6379) })),
          { clusterRetryStrategy: () => null, redisOptions: options },
        )
      : new Redis(urls[0]!, options);
    client.on('error', () => undefined);
    const coordinator = createIoredisCoordinator({ client, prefix, commandTimeoutMs: 5000 });
    return {
      coordinator,
      async close() {
        await coordinator.close();
        client.disconnect();
      },
    };
  },
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  signal: stop.signal,
  version: `${manifest.name} ${manifest.version}`,
});
