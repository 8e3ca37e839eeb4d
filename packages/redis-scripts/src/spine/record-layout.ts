/**
 * The one description of a stored flight record: a fixed-width ASCII header, then the text fields as
 * `<bytes>:<value>`, then (once SUCCEEDED) the result, verbatim. `scripts/gen-lua.mjs` builds from it
 * the Lua codec (the `layout` and `codec` includes of lua/includes/header.lua and record.lua) and
 * src/record.generated.ts (the decoder of reply.ts). Changing it changes the stored layout: bump
 * `FLIGHT_SCRIPT_VERSION` (lua/includes/common.lua) and `RECORD_LAYOUT` (../keys.ts) with it.
 *
 * Fields are listed in `FlightMeta`'s order, so every decoded record has the same hidden class as the
 * records core builds.
 */
import type { FlightMeta } from '@flight/core/adapter';

/**
 * How a header field is stored: `status` its status's first letter; `time` epoch ms, 13 digits (clamped
 * to the largest such time); `int` 16 digits; `count` 6 digits (capped at 999999); `flag` '1' | '0'
 * (`FlightMeta` holds a boolean); `resultFlag` '1' when a result follows the record (`resultRef` is then
 * 'result'); `hex` a fixed-width string.
 */
export type HeaderKind = 'status' | 'time' | 'int' | 'count' | 'flag' | 'resultFlag' | 'hex';

/** A field of the record: where `FlightMeta` takes it from and, in Lua, the index constant of its value. */
export type RecordField =
  /** Not stored: part of the flight's ref (its key is their digest), which every caller knows. */
  | { readonly name: keyof FlightMeta; readonly ref: 'stage' | 'key' }
  /** In the header, at 1-based byte position `at`. */
  | {
      readonly name: keyof FlightMeta | 'watched';
      readonly lua: string;
      readonly at: number;
      readonly width: number;
      readonly kind: HeaderKind;
    }
  /**
   * The `text`-th text field after the header. `optional`: absent from `FlightMeta` when empty; `type`:
   * the TypeScript type of its value when narrower than `string`.
   */
  | { readonly name: keyof FlightMeta; readonly lua: string; readonly text: number; readonly optional?: true; readonly type?: string };

export const RECORD_FIELDS = [
  { name: 'status', lua: 'STATUS', at: 1, width: 1, kind: 'status' },
  { name: 'stage', ref: 'stage' },
  { name: 'requestKey', ref: 'key' },
  { name: 'sessionId', lua: 'SESSION', text: 2 },
  { name: 'ownerId', lua: 'OWNER_ID', text: 0 },
  { name: 'ownerToken', lua: 'OWNER_TOKEN', text: 1 },
  { name: 'epoch', lua: 'EPOCH', at: 67, width: 16, kind: 'int' },
  { name: 'takeovers', lua: 'TAKEOVERS', at: 101, width: 6, kind: 'count' },
  { name: 'followers', lua: 'FOLLOWERS', at: 107, width: 6, kind: 'count' },
  { name: 'createdAt', lua: 'CREATED', at: 54, width: 13, kind: 'time' },
  { name: 'updatedAt', lua: 'UPDATED', at: 2, width: 13, kind: 'time' },
  { name: 'heartbeatAt', lua: 'HEARTBEAT', at: 28, width: 13, kind: 'time' },
  { name: 'expireAt', lua: 'EXPIRE', at: 15, width: 13, kind: 'time' },
  { name: 'deadlineAt', lua: 'DEADLINE', at: 41, width: 13, kind: 'time' },
  { name: 'retryable', lua: 'RETRYABLE', at: 84, width: 1, kind: 'flag' },
  { name: 'errorType', lua: 'ERROR_TYPE', text: 3, type: "FailureType | ''" },
  { name: 'errorCode', lua: 'ERROR_CODE', text: 4 },
  { name: 'errorMessage', lua: 'ERROR_MESSAGE', text: 5 },
  { name: 'resultRef', lua: 'RESULT_REF', at: 83, width: 1, kind: 'resultFlag' },
  { name: 'traceparent', lua: 'TRACEPARENT', text: 6, optional: true },
  { name: 'nonce', lua: 'NONCE', at: 85, width: 16, kind: 'hex' },
  { name: 'forgottenEpoch', lua: 'FORGOTTEN', at: 114, width: 16, kind: 'int' },
  /** Not part of `FlightMeta`: a waiter that did not join the run asked for its terminal notice. */
  { name: 'watched', lua: 'WATCHED', at: 113, width: 1, kind: 'flag' },
] as const satisfies readonly RecordField[];

/** Every `FlightMeta` field has a place in the record (a compile error names the missing one). */
export const EVERY_META_FIELD_HAS_A_PLACE: Exclude<keyof FlightMeta, (typeof RECORD_FIELDS)[number]['name']> extends never ? true : never =
  true;
