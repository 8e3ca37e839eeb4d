/**
 * The untouched complete's record (untouched-complete.ts `succeededRecord`) is patched by position from the
 * record the fast acquire wrote: it must be what `encodeRecord` gives for transitions.ts `complete`'s meta,
 * byte for byte, whatever the text fields and times. (The untouched suite compares it with the record the
 * complete script writes, on real servers.)
 */
import fc from 'fast-check';
import { transitions } from '@flight/core/adapter';
import { describe, expect, it } from 'vitest';
import { encodeRecord } from '../src/spine/record.generated';
import { runningMeta } from './running-meta';
import { succeededRecord } from '../src/fast-paths/untouched-complete';

const text = fc.oneof(fc.string({ maxLength: 16 }), fc.constantFrom('', 'ключ ✓', '🙂:1:', '0:', 'a b\nc', 'x'.repeat(60)));
const time = fc.integer({ min: 0, max: 9_999_999_999_999 });

describe('succeededRecord', () => {
  it('is encodeRecord of the completed meta, byte for byte', () => {
    fc.assert(
      fc.property(
        fc.record({
          ownerId: text,
          ownerToken: text,
          sessionId: text,
          traceparent: fc.option(text, { nil: undefined }),
          times: fc.array(time, { minLength: 5, maxLength: 5 }),
          epoch: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
          takeovers: fc.integer({ min: 0, max: 999_999 }),
          forgottenEpoch: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
          nonce: fc.stringMatching(/^[0-9a-f]{16}$/),
          now: time,
          ttl: fc.integer({ min: 1, max: 1e9 }),
        }),
        (c) => {
          const [createdAt, updatedAt, heartbeatAt, expireAt, deadlineAt] = c.times as [number, number, number, number, number];
          const meta = runningMeta({
            sessionId: c.sessionId,
            ownerId: c.ownerId,
            ownerToken: c.ownerToken,
            epoch: c.epoch,
            takeovers: c.takeovers,
            createdAt,
            updatedAt,
            heartbeatAt,
            expireAt,
            deadlineAt,
            nonce: c.nonce,
            forgottenEpoch: c.forgottenEpoch,
            ...(c.traceparent === undefined ? {} : { traceparent: c.traceparent }),
          });
          const fence = { stage: 's', key: 'k', ownerId: c.ownerId, ownerToken: c.ownerToken, epoch: c.epoch };
          const now = Math.min(c.now, expireAt - 1);
          fc.pre(now >= 0 && now + c.ttl <= 9_999_999_999_999 && c.forgottenEpoch !== c.epoch);
          const { next } = transitions.complete({ meta }, fence, { result: 'r', resultTtlMs: c.ttl }, now);
          expect(next).toBeDefined();
          expect(succeededRecord(encodeRecord(meta, false), now, now + c.ttl)).toBe(encodeRecord(next!.meta, false));
        },
      ),
      { numRuns: 500 },
    );
  });
});
