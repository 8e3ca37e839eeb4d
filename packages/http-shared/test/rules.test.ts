/** Unit tests of the framework-neutral rules: options, keys, Idempotency-Key parsing, sharing rules. */
import { createSingleFlight, FlightValidationError } from '@flight/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalQuery,
  eachSharedHeader,
  FlightIdempotencyKeyInvalidError,
  isSharedResponse,
  isUnsharedOutcome,
  parseIdempotencyKey,
  resolveHttpFlightOptions,
  sharedBody,
  stableStringify,
  toShared,
  unshareableReason,
  unsharedOutcome,
  UnshareableResponse,
} from '../src/index.js';

const singleFlight = createSingleFlight();
const resolve = (extra: Record<string, unknown> = {}) => resolveHttpFlightOptions({ singleFlight, stage: 'http', ...extra });

describe('options', () => {
  it('resolves the documented defaults', () => {
    const options = resolve();
    expect([...options.methods]).toEqual(['GET', 'HEAD']);
    expect(options.shareStatus(200)).toBe(true);
    expect(options.shareStatus(299)).toBe(true);
    expect(options.shareStatus(304)).toBe(false);
    expect(options.onUnshareable).toBe('run');
    expect(options.maxBodyBytes).toBe(1024 * 1024);
    expect(options.maxRequestBodyBytes).toBe(1024 * 1024);
    expect(options.replayHeaders.has('set-cookie')).toBe(false);
    expect(options.vary).toEqual(['accept', 'accept-encoding', 'accept-language', 'x-forwarded-host', 'x-forwarded-proto']);
    expect(options.idempotency).toBeUndefined();
    expect(options.roleHeader).toBe('x-flight-role');
    expect(options.credentialHeaders).toEqual(['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'x-auth-token']);
    expect(options.shareAcrossHosts).toBe(false);
    expect(options.stream).toBe(false);
    expect(resolve({ idempotency: true }).idempotency).toMatchObject({
      header: 'idempotency-key',
      required: true,
      maxKeyLength: 255,
      inFlight: 'wait',
    });
  });

  it.each([
    [{ methods: ['POST'] }, /unsafe methods/],
    [{ methods: ['OPTIONS'] }, /explicit key function/],
    [{ replayHeaders: ['Set-Cookie'] }, /never replayed/],
    [{ replayHeaders: ['bad header'] }, /invalid header name/],
    [{ maxBodyBytes: 0 }, /positive integer/],
    [{ onUnshareable: 'maybe' }, /onUnshareable/],
    [{ shareStatuses: [1000] }, /invalid status/],
    [{ idempotency: { methods: ['GET'] } }, /safe method/],
    [{ stage: 'no spaces' }, /invalid stage/],
    [{ singleFlight: {} }, /SingleFlight instance/],
    [{ credentialHeaders: ['x key'] }, /invalid header name/],
    [{ shareAcrossHosts: 'yes' }, /shareAcrossHosts/],
    [{ stream: 'yes' }, /stream must be a boolean/],
  ])('refuses %j with a FlightValidationError', (extra, message) => {
    expect(() => resolve(extra)).toThrow(FlightValidationError);
    expect(() => resolve(extra)).toThrow(message);
  });

  it('accepts safe methods with a key function', () => {
    expect([...resolve({ methods: ['get', 'QUERY'], key: () => 'k' }).methods]).toEqual(['GET', 'QUERY']);
  });
});

describe('Idempotency-Key', () => {
  it('accepts RFC 8941 sf-strings (escapes resolved, parameters ignored)', () => {
    expect(parseIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"', 255)).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
    expect(parseIdempotencyKey('"a \\"quoted\\" key"', 255)).toBe('a "quoted" key');
    expect(parseIdempotencyKey(' "padded" ', 255)).toBe('padded');
    expect(parseIdempotencyKey(['"one-line"'], 255)).toBe('one-line');
    expect(parseIdempotencyKey('"k";v=1', 255)).toBe('k');
  });

  it.each([
    ['""'],
    ['"open'],
    ['"ab"cd"'], // an unescaped quote inside
    ['"a1", "b2"'], // two values joined on one line (or by Node from two lines)
    [['"a1"', '"b2"']], // the header repeated
    ['plain-token'], // a bare token is not an sf-string
    ['two words'],
    ['"é"'],
    [`"${'x'.repeat(300)}"`],
    [[]],
  ])('refuses %j', (raw) => {
    expect(() => parseIdempotencyKey(raw as string, 255)).toThrow(FlightIdempotencyKeyInvalidError);
  });
});

describe('keys', () => {
  it('sorts query parameters by name and keeps repeated values in order', () => {
    expect(canonicalQuery('b=2&a=1&b=1')).toBe('a=1&b=2&b=1');
    expect(canonicalQuery('')).toBe('');
  });

  it('stable JSON does not depend on key order', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (object) => {
        const reversed = Object.fromEntries(Object.entries(object).reverse());
        expect(stableStringify(reversed)).toBe(stableStringify(object));
      }),
    );
  });
});

describe('sharing rules', () => {
  const options = resolve();
  const response = (status: number, headers: Record<string, string | string[]>, body = 'x') => ({
    status,
    headers,
    body: Buffer.from(body),
  });

  it('refuses statuses outside shareStatuses, private/no-store, unknown Vary and oversize bodies', () => {
    expect(unshareableReason(response(500, {}), options)?.outcome).toEqual({ reason: 'status', status: 500 });
    expect(unshareableReason(response(200, { 'cache-control': 'max-age=0, private' }), options)?.reason).toBe('private');
    expect(unshareableReason(response(200, { 'cache-control': 'no-store' }), options)?.reason).toBe('private');
    expect(unshareableReason(response(200, { vary: 'Origin' }), options)?.reason).toBe('vary');
    expect(unshareableReason(response(200, { vary: '*' }), options)?.reason).toBe('vary');
    expect(unshareableReason(response(200, { vary: 'Accept-Encoding, accept' }), options)).toBeUndefined();
    expect(unshareableReason(response(200, {}, 'x'.repeat(options.maxBodyBytes + 1)), options)?.reason).toBe('too-large');
  });

  it('keeps only allow-listed headers and round-trips through JSON', () => {
    const shared = toShared(
      response(201, { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'], 'x-user': 'u', link: ['<a>', '<b>'] }, 'héllo'),
      options,
      'GET',
    );
    expect(shared.headers).toEqual([
      ['content-type', 'text/plain'],
      ['link', '<a>'],
      ['link', '<b>'],
    ]);
    const copy = JSON.parse(JSON.stringify(shared));
    expect(isSharedResponse(copy)).toBe(true);
    expect(sharedBody(copy).toString()).toBe('héllo');
  });

  it('carries a UTF-8 body as its text and only a binary body as base64', () => {
    const text = toShared(response(200, {}, '{"a":"é"}'), options, 'GET');
    expect(text).toMatchObject({ v: 2, body: '{"a":"é"}' });
    expect(text.b64).toBeUndefined();
    const bytes = Buffer.from([0xff, 0x00, 0xc3]);
    const binary = toShared({ status: 200, headers: {}, body: bytes }, options, 'GET');
    expect(binary).toMatchObject({ body: bytes.toString('base64'), b64: 1 });
    expect(sharedBody(JSON.parse(JSON.stringify(binary))).equals(bytes)).toBe(true);
    // A response stored by an older node (v1: always base64) still replays.
    expect(sharedBody({ v: 1, status: 200, headers: [], body: Buffer.from('old').toString('base64') }).toString()).toBe('old');
  });

  it('replays each header name once, repeated values together, whatever their order in the record', () => {
    const seen = (headers: [string, string][]) => {
      const out: [string, string | string[]][] = [];
      eachSharedHeader({ v: 2, status: 200, headers, body: '' }, (name, value) => out.push([name, value]));
      return out;
    };
    expect(
      seen([
        ['content-type', 'text/plain'],
        ['link', '<a>'],
        ['link', '<b>'],
      ]),
    ).toEqual([
      ['content-type', 'text/plain'],
      ['link', ['<a>', '<b>']],
    ]);
    expect(
      seen([
        ['link', '<a>'],
        ['etag', '"1"'],
        ['link', '<b>'],
      ]),
    ).toEqual([
      ['link', ['<a>', '<b>']],
      ['etag', '"1"'],
    ]);
  });

  it('carries an unshareable outcome as a typed value (idempotency mode), through JSON', () => {
    expect(new UnshareableResponse('status', 404).outcome).toEqual({ reason: 'status', status: 404 });
    expect(new UnshareableResponse('timeout', undefined).outcome).toEqual({ reason: 'timeout' });
    expect(new UnshareableResponse('too-large', undefined).outcome).toEqual({ reason: 'other' });
    const stored = JSON.parse(JSON.stringify(unsharedOutcome(new UnshareableResponse('status', 500), 'fp1')));
    expect(isUnsharedOutcome(stored)).toBe(true);
    expect(stored).toEqual({ v: 2, unshared: { reason: 'status', status: 500 }, fp: 'fp1' });
    expect(isSharedResponse(stored)).toBe(false);
    expect(isUnsharedOutcome({ v: 2, unshared: { reason: 'status' } })).toBe(false);
    expect(isUnsharedOutcome({ v: 2, status: 200, headers: [], body: '' })).toBe(false);
  });

  it('an unshareable response is no HTTP error and no failure type of its own for the core classifier', () => {
    const refused = new UnshareableResponse('status', 504);
    expect(refused).not.toHaveProperty('status');
    expect(refused).not.toHaveProperty('failureType');
  });
});
