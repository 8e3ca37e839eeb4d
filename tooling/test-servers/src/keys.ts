import { rawCommand, type RespValue } from './resp';

/** Every key matching `pattern` that has no TTL, on one server (call it for each cluster master). */
export async function scanKeysWithoutTtl(target: { port: number; host?: string } | string, pattern: string): Promise<string[]> {
  const { host, port } =
    typeof target === 'string' ? { host: new URL(target).hostname, port: Number(new URL(target).port || 6379) } : target;
  const found: string[] = [];
  let cursor = '0';
  do {
    const reply = (await rawCommand(port, ['SCAN', cursor, 'MATCH', pattern, 'COUNT', 1000], host)) as RespValue[];
    cursor = String(reply[0]);
    for (const key of (reply[1] as string[]) ?? []) {
      const ttl = await rawCommand(port, ['PTTL', key], host);
      if (ttl === -1) found.push(key);
    }
  } while (cursor !== '0');
  return found;
}

/** Deletes every key matching `pattern` on one server (test cleanup by SCAN). */
export async function deleteKeys(target: { port: number; host?: string } | string, pattern: string): Promise<number> {
  const { host, port } =
    typeof target === 'string' ? { host: new URL(target).hostname, port: Number(new URL(target).port || 6379) } : target;
  let cursor = '0';
  let deleted = 0;
  do {
    const reply = (await rawCommand(port, ['SCAN', cursor, 'MATCH', pattern, 'COUNT', 1000], host)) as RespValue[];
    cursor = String(reply[0]);
    for (const key of (reply[1] as string[]) ?? []) deleted += Number(await rawCommand(port, ['DEL', key], host));
  } while (cursor !== '0');
  return deleted;
}

/** The shared test Redis (`REDIS_URL`, default redis://127.0.0.1:6379). */
export function sharedRedisUrl(): string {
  return process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
}

/** How many clients are connected with `name` (CLIENT LIST), on one server. */
export async function countClients(target: { port: number; host?: string }, name?: string): Promise<number> {
  const list = await rawCommand(target.port, ['CLIENT', 'LIST'], target.host);
  const lines = String(list)
    .split('\n')
    .filter((line) => line.trim().length > 0);
  return name ? lines.filter((line) => line.includes(` name=${name} `)).length : lines.length;
}
