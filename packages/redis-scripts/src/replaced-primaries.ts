/**
 * The primaries the Sentinels replaced lately, as both adapters keep them away from their commands. After a
 * failover the old primary still takes writes until the Sentinels turn it into a replica: a process still on
 * it and a process on the promoted primary could each own the same flight. The Sentinels announce each switch
 * on their `+switch-master` channel; an adapter remembers the old address here and keeps its commands off it.
 */

/**
 * How long a replaced primary is kept away from. A Sentinel turns a replaced primary that still says it is
 * one into a replica within its INFO period (10 s) and 4 publish periods (8 s) of seeing it (fixed in
 * Redis); a switch back to that address ends it sooner.
 */
export const REPLACED_PRIMARY_FOR_MS = 30_000;

export interface PrimaryAddress {
  host: string;
  port: number;
}

/** A `+switch-master` message, `<name> <old ip> <old port> <new ip> <new port>`, or undefined when malformed. */
export function parseSwitchMaster(message: string): { name: string; old: PrimaryAddress; promoted: PrimaryAddress } | undefined {
  const [name, oldHost, oldPort, newHost, newPort] = message.split(' ');
  if (!name || !oldHost || !newHost || !Number(oldPort) || !Number(newPort)) return undefined;
  return { name, old: { host: oldHost, port: Number(oldPort) }, promoted: { host: newHost, port: Number(newPort) } };
}

/** The primaries a switch replaced, each until a later switch names it primary again or its time is up. */
export class ReplacedPrimaries {
  readonly #until = new Map<string, { address: PrimaryAddress; until: number }>();

  /** A switch from `old` to `promoted`. */
  add(old: PrimaryAddress, promoted: PrimaryAddress): void {
    this.#until.delete(`${promoted.host}:${promoted.port}`);
    this.#until.set(`${old.host}:${old.port}`, { address: old, until: Date.now() + REPLACED_PRIMARY_FOR_MS });
  }

  /** Whether a replaced primary that is still kept away from satisfies `matches`. */
  includes(matches: (address: PrimaryAddress) => boolean): boolean {
    if (this.#until.size === 0) return false;
    const now = Date.now();
    for (const [key, { address, until }] of this.#until) {
      if (until <= now) this.#until.delete(key);
      else if (matches(address)) return true;
    }
    return false;
  }
}
