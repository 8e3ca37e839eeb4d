/**
 * Tests that tamper with a stored flight by hand (a lease overwritten, a field corrupted) edit the record
 * string that lua/includes/common.lua writes: its fields in FIELDS order as `<bytes>:<value>`, then the
 * result. Byte lengths (UTF-8), so any value round-trips.
 */
const FIELDS = [
  'status', 'stage', 'requestKey', 'sessionId', 'ownerId', 'ownerToken', 'epoch', 'takeovers', 'followers', 'createdAt',
  'updatedAt', 'heartbeatAt', 'expireAt', 'deadlineAt', 'retryable', 'errorType', 'errorCode', 'errorMessage', 'resultRef', 'nonce',
  'forgottenEpoch',
] as const;

export type RecordField = (typeof FIELDS)[number];

/** Returns `raw` (a stored flight) with `changes` applied; the result after the record is kept. */
export function patchFlightRecord(raw: string, changes: Partial<Record<RecordField, string>>): string {
  const bytes = Buffer.from(raw, 'utf8');
  const values: Buffer[] = [];
  let i = 0;
  for (let f = 0; f < FIELDS.length; f++) {
    const colon = bytes.indexOf(0x3a, i);
    if (colon < 0) throw new Error('not a flight record');
    const n = Number(bytes.subarray(i, colon).toString('latin1'));
    values.push(bytes.subarray(colon + 1, colon + 1 + n));
    i = colon + 1 + n;
  }
  const parts: Buffer[] = [];
  FIELDS.forEach((field, f) => {
    const value = changes[field] === undefined ? values[f]! : Buffer.from(changes[field]!, 'utf8');
    parts.push(Buffer.from(`${value.length}:`, 'latin1'), value);
  });
  parts.push(bytes.subarray(i));
  return Buffer.concat(parts).toString('utf8');
}
