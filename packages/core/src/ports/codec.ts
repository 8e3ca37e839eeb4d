import type { StoredResult } from '../state/types.js';

export type { StoredResult };

export interface EncodeOptions {
  maxBytes: number;
  /**
   * The coordinator stores bytes as they are (`FlightCoordinator.storesBytes`): the codec MAY return a
   * `Uint8Array` (a compressed body without base64). Otherwise it MUST return a string. @default false
   */
  bytes?: boolean;
}

/**
 * Turns results into stored text (or bytes) and back.
 * Implementations MUST verify integrity on `decode` and throw `FlightCorruptResultError` for
 * a damaged payload, and enforce `maxBytes` on both sides (`FlightResultTooLargeError`). `decode` is given
 * what `encode` returned (a codec that never returns bytes is never given bytes).
 */
export interface ResultCodec {
  encode(value: unknown, options: EncodeOptions): StoredResult;
  decode(payload: StoredResult, options: { maxBytes: number }): unknown;
  /**
   * Optional: `encode`, plus the value `decode` would give back for that payload, without decoding it
   * (an owner returns the same shape as its followers). Codecs that cannot do it cheaply leave it out.
   */
  encodeWithCopy?(value: unknown, options: EncodeOptions): { payload: StoredResult; value: unknown };
}
