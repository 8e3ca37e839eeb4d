/**
 * The vitest global setup of every workspace project: the tests use the Redis at `REDIS_URL` (default
 * 127.0.0.1:6379) when it answers PING, else a `redis-server` of their own on a free port, stopped at the end.
 */
import { rawCommand } from './resp';
import { startRedisServer } from './servers';

async function answersPing(url: URL): Promise<boolean> {
  try {
    return (await rawCommand(Number(url.port || 6379), ['PING'], url.hostname, 500)) === 'PONG';
  } catch {
    return false;
  }
}

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  if (await answersPing(url)) {
    process.env.REDIS_URL = url.toString();
    return undefined;
  }
  try {
    const server = await startRedisServer();
    process.env.REDIS_URL = server.url;
    return () => server.stop();
  } catch (error) {
    console.error(`[flight tests] no Redis at ${url.toString()} and redis-server could not start: ${(error as Error).message}`);
    return undefined;
  }
}
