/**
 * Tests that tamper with a stored flight by hand (a lease overwritten, a field corrupted) edit the record
 * string of @flight/redis-scripts' record-layout.ts: a fixed-width header, then the text fields as
 * `<bytes>:<value>`, then the result. Byte lengths (UTF-8), so any value round-trips.
 */
import { RECORD_HEADER, RECORD_HEADER_BYTES, RECORD_TEXT_FIELDS } from '@flight/redis-scripts';

export type RecordField = keyof typeof RECORD_HEADER | (typeof RECORD_TEXT_FIELDS)[number];

/** Returns `raw` (a stored flight) with `changes` applied; the result after the record is kept. */
export function patchFlightRecord(raw: string, changes: Partial<Record<RecordField, string>>): string {
  const bytes = Buffer.from(raw, 'utf8');
  const header = Buffer.from(bytes.subarray(0, RECORD_HEADER_BYTES));
  for (const [field, [offset, width]] of Object.entries(RECORD_HEADER)) {
    const value = changes[field as RecordField];
    if (value === undefined) continue;
    if (value.length > width) throw new Error(`${field} is ${width} characters wide`);
    header.write(value.padStart(width, width === 1 ? ' ' : '0'), offset, 'latin1');
  }
  const parts: Buffer[] = [header];
  let i = RECORD_HEADER_BYTES;
  for (const field of RECORD_TEXT_FIELDS) {
    const colon = bytes.indexOf(0x3a, i);
    if (colon < 0) throw new Error('not a flight record');
    const n = Number(bytes.subarray(i, colon).toString('latin1'));
    const change = changes[field];
    const value = change === undefined ? bytes.subarray(colon + 1, colon + 1 + n) : Buffer.from(change, 'utf8');
    parts.push(Buffer.from(`${value.length}:`, 'latin1'), value);
    i = colon + 1 + n;
  }
  parts.push(bytes.subarray(i));
  return Buffer.concat(parts).toString('utf8');
}
