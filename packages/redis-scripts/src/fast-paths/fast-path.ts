/**
 * The contract of every fast path beside the spine's scripts. A fast path never decides differently from
 * the script it stands beside, it only decides faster: `attempt` either handles the call (a promise of
 * the reply the script would have given) or declines it to the script, at once (`undefined`: the call is
 * not for this path) or after trying (a promise of `undefined`: what it found is the script's to decide).
 * Fast paths are chosen in one place, choose.ts, from the client's and the server's capabilities.
 */
export interface FastPath<Args extends unknown[], Reply> {
  attempt(...args: Args): Promise<Reply | undefined> | undefined;
}
