import { FlightCoordinationError } from '@flight/core';
import { transitions, type FlightMeta } from '@flight/core/adapter';
import { describe, expect, it } from 'vitest';
import { decodeReply, decodeWriteReply } from '../src/spine/reply.js';
import { encodeRecord } from '../src/spine/record.generated.js';

const ref = { stage: 'stage', key: 'key' };
const input = {
  ...ref,
  takeoverAfterMs: 3000,
  leaseTtlMs: 6000,
  maxRunMs: 20_000,
  ownerId: 'node-a',
  ownerToken: 'token-1',
  startRunning: true,
};

function completedRecord(): { meta: FlightMeta; record: string } {
  const meta: FlightMeta = { ...transitions.newOwnerMeta(input, null, 1_700_000_000_000), status: 'SUCCEEDED', followers: 3 };
  meta.updatedAt = 1_700_000_000_250;
  return { meta, record: encodeRecord(meta, false) };
}

describe('owner write replies', () => {
  it('reads updatedAt from the header and decodes the rest of an accepted record only when meta is read', () => {
    const { meta, record } = completedRecord();
    const { reply, updatedAt } = decodeWriteReply(['OK', record, false], ref);
    expect(updatedAt).toBe(1_700_000_000_250);
    expect(reply.ok).toBe(true);
    // The same meta the eager decoder gives, field for field.
    expect(reply.ok && reply.meta).toEqual(decodeReply(['OK', record, false], ref).meta);
    expect(reply.ok && reply.meta.followers).toBe(meta.followers);
    expect(reply.ok && reply.meta.ownerToken).toBe('token-1');
  });

  it('gives no updatedAt (no clock sample) for the OK of a repeated write that found its outcome stored', () => {
    const { record } = completedRecord();
    const { reply, updatedAt } = decodeWriteReply(['OK', record, 'unchanged'], ref);
    expect(reply.ok).toBe(true);
    expect(updatedAt).toBeUndefined();
  });

  it('defers a damaged text part to the first read of meta, but refuses a damaged header at once', () => {
    const { record } = completedRecord();
    // Header intact, text fields cut short: the write is accepted; reading its meta throws the typed error.
    const { reply, updatedAt } = decodeWriteReply(['OK', record.slice(0, -3), false], ref);
    expect(updatedAt).toBe(1_700_000_000_250);
    expect(() => reply.ok && reply.meta).toThrow(FlightCoordinationError);
    // A status letter that is none, or a header cut short: the reply itself is refused.
    expect(() => decodeWriteReply(['OK', `X${record.slice(1)}`, false], ref)).toThrow(FlightCoordinationError);
    expect(() => decodeWriteReply(['OK', record.slice(0, 20), false], ref)).toThrow(FlightCoordinationError);
    expect(() => decodeWriteReply(['OK', `S${'x'.repeat(13)}${record.slice(14)}`, false], ref)).toThrow(FlightCoordinationError);
  });

  it('maps a refused write to FENCED or FORGOTTEN with the status and epoch of the record found', () => {
    const { record } = completedRecord();
    const fenced = decodeWriteReply(['FENCED', record, false], ref);
    expect(fenced).toEqual({ reply: { ok: false, code: 'FENCED', status: 'SUCCEEDED', epoch: expect.any(Number) }, updatedAt: undefined });
    expect(decodeWriteReply(['FORGOTTEN', '', false], ref)).toEqual({
      reply: { ok: false, code: 'FORGOTTEN', status: null, epoch: null },
      updatedAt: undefined,
    });
  });
});
