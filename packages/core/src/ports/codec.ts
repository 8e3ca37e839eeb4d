/**
 * Turns results into stored text and back. Every coordinator stores strings.
 * Implementations MUST verify integrity on `decode` and throw `FlightCorruptResultError` for
 * a damaged payload, and enforce `maxBytes` on both sides (`FlightResultTooLargeError`).
 */
export interface ResultCodec {
  encode(value: unknown, options: { maxBytes: number }): string;
  decode(payload: string, options: { maxBytes: number }): unknown;
  /**
   * Optional: `encode`, plus the value `decode` would give back for that payload, without decoding it
   * (an owner returns the same shape as its followers). Codecs that cannot do it cheaply leave it out.
   */
  encodeWithCopy?(value: unknown, options: { maxBytes: number }): { payload: string; value: unknown };
}
