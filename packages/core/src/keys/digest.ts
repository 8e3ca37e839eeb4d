/** Digests of short texts (keys, tokens): by the one-shot `crypto.hash` where Node has it (>= 20.12). */
import * as crypto from 'node:crypto';

type OneShot = (algorithm: string, data: string | Uint8Array, encoding: 'hex' | 'base64url') => string;

/** The one-shot `crypto.hash`: no Hash object per digest. */
const oneShotHash = (crypto as { hash?: OneShot }).hash;

/** `algorithm`'s digest of `data` in `encoding`. */
export function digestOf(algorithm: 'sha1' | 'sha256', data: string | Uint8Array, encoding: 'hex' | 'base64url'): string {
  return oneShotHash ? oneShotHash(algorithm, data, encoding) : crypto.createHash(algorithm).update(data).digest(encoding);
}
