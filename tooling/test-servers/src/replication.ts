/** Waiting for a replica: the one loop every test and bench that starts a primary and a replica needs. */
import { rawCommand } from './resp';
import { sleep } from './servers';

/** A field of an `INFO` reply (`master_link_status`, `connected_slaves`, `role`, …), or undefined. */
export const infoField = (info: unknown, field: string): string | undefined =>
  new RegExp(`^${field}:(.*)$`, 'm').exec(String(info))?.[1]?.trim();

/** Asks `probe` every 50 ms until it gives a value (errors count as none); fails after `timeoutMs` naming `what`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe().catch(() => undefined);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Resolves once the replica on `port` has its link to its primary up (it synced), within `timeoutMs`. */
export async function replicaInSync(port: number, timeoutMs = 30_000): Promise<void> {
  await until(
    `the replica on port ${port} to sync`,
    async () => (infoField(await rawCommand(port, ['INFO', 'replication']), 'master_link_status') === 'up' ? true : undefined),
    timeoutMs,
  );
}
