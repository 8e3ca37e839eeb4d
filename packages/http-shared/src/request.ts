/**
 * Request-side helpers: header access, canonical query, body reading under a size cap, fingerprints,
 * the `Idempotency-Key` parser and the client-disconnect signal.
 */
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { parseItem } from 'structured-headers';
import { FlightBodyTooLargeError, FlightIdempotencyKeyInvalidError } from './errors.js';

/** The framework-neutral view of a request. */
export interface HttpRequestInfo {
  /** Upper-case method. */
  method: string;
  /** The path, without the query string. */
  path: string;
  /** The raw query string, without `?`. */
  query: string;
  headers: IncomingHttpHeaders;
  /** The field lines of one header as received, one entry per line (`req.headersDistinct[name]`). */
  headerLines(name: string): readonly string[] | undefined;
}

/**
 * A Node request as the handler sees it, for every adapter: `method` upper-cased, `url` split into path
 * and query, the headers, and each header's lines as received (`raw.headersDistinct`). A class, so a
 * request costs one object and no closure.
 */
class NodeRequestInfo implements HttpRequestInfo {
  readonly method: string;
  readonly path: string;
  readonly query: string;

  constructor(
    private readonly raw: IncomingMessage,
    method: string,
    url: string,
    readonly headers: IncomingHttpHeaders,
  ) {
    const mark = url.indexOf('?');
    this.method = method.toUpperCase();
    this.path = mark === -1 ? url : url.slice(0, mark);
    this.query = mark === -1 ? '' : url.slice(mark + 1);
  }

  headerLines(name: string): readonly string[] | undefined {
    return headerLinesOf(this.raw, name, this.headers);
  }
}

/**
 * The field lines of header `name` (lower case) as received: `headersDistinct` where Node gives it
 * (HTTP/1.1), else the raw name/value list (HTTP/2's compatibility request, `light-my-request` behind
 * `fastify.inject()`), else the parsed header itself.
 */
export function headerLinesOf(
  raw: Pick<IncomingMessage, 'headersDistinct' | 'rawHeaders'>,
  name: string,
  headers: IncomingHttpHeaders,
): readonly string[] | undefined {
  const distinct = raw.headersDistinct as IncomingMessage['headersDistinct'] | undefined;
  if (distinct) return distinct[name];
  const list = raw.rawHeaders as readonly string[] | undefined;
  if (Array.isArray(list) && list.length > 0) {
    const lines: string[] = [];
    for (let i = 0; i + 1 < list.length; i += 2) if (list[i]!.toLowerCase() === name) lines.push(String(list[i + 1]));
    return lines.length > 0 ? lines : undefined;
  }
  const value = headers[name];
  return value === undefined ? undefined : Array.isArray(value) ? value : [value];
}

/**
 * The host a request was sent to, lower-cased: HTTP/2's `:authority`, else the `Host` header (HTTP/1.1),
 * so one host is the same key on both protocols. Null when the request names none.
 */
export function requestHost(headers: IncomingHttpHeaders): string | null {
  const authority = (headers as Record<string, string | string[] | undefined>)[':authority'];
  const host = typeof authority === 'string' && authority !== '' ? authority : headers.host;
  return typeof host === 'string' && host !== '' ? host.toLowerCase() : null;
}

/** The `HttpRequestInfo` of a Node request (`raw`), with the method and URL the framework reports. */
export function nodeRequestInfo(raw: IncomingMessage, method: string, url: string, headers: IncomingHttpHeaders): HttpRequestInfo {
  return new NodeRequestInfo(raw, method, url, headers);
}

/** One header as a single string (repeated values joined by `, `), or `undefined`. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The query with its parameters sorted by name (values of one name keep their order). */
export function canonicalQuery(query: string): string {
  const params = [...new URLSearchParams(query)];
  params.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return new URLSearchParams(params).toString();
}

/** The declared `Content-Length`, or `undefined`. */
export function declaredLength(headers: IncomingHttpHeaders): number | undefined {
  const raw = headers['content-length'];
  if (raw === undefined) return undefined;
  const length = Number(raw);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/** True when the request carries a body (non-zero length, or chunked). */
export function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = declaredLength(headers);
  return (length !== undefined && length > 0) || headers['transfer-encoding'] !== undefined;
}

/** Reads a request body, refusing with `FlightBodyTooLargeError` once it passes `limit` bytes. */
export function readBody(stream: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = declaredLength(stream.headers);
  if (declared !== undefined && declared > limit) {
    return Promise.reject(tooLarge(limit, declared));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer | string) => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buffer.length;
      if (size > limit) {
        cleanup();
        // Drain (and discard) the rest so the client can read the 413.
        stream.resume();
        reject(tooLarge(limit, size));
        return;
      }
      chunks.push(buffer);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onAborted = () => onError(new Error('request aborted'));
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('aborted', onAborted);
  });
}

function tooLarge(limit: number, size: number): FlightBodyTooLargeError {
  return new FlightBodyTooLargeError(`request body of ${size} bytes or more is above the limit of ${limit} bytes`, {
    context: { limit, size },
  });
}

/** JSON with object keys sorted, so equal values give equal text whatever their key order. */
export function stableStringify(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item && typeof item === 'object' && !Array.isArray(item) && !Buffer.isBuffer(item) && !(item instanceof Uint8Array)) {
      const sorted: Record<string, unknown> = {};
      for (const key of Object.keys(item).sort()) sorted[key] = (item as Record<string, unknown>)[key];
      return sorted;
    }
    return item;
  });
}

/** The bytes of a body that a body parser already read (Buffer, string, or parsed JSON/form). */
export function parsedBodyBytes(body: unknown): Buffer {
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(stableStringify(body) ?? '', 'utf8');
}

/** Fingerprint of an idempotent request: method, path with canonical query, and body. */
export function requestFingerprint(request: HttpRequestInfo, body: Buffer): string {
  return createHash('sha256')
    .update(`${request.method} ${request.path}?${canonicalQuery(request.query)}\n`)
    .update(body)
    .digest('base64url');
}

/**
 * Parses an `Idempotency-Key` strictly as an RFC 8941 sf-string (`"…"`, printable ASCII, `\"` and `\\`
 * escapes), the form the IETF draft defines; parameters are ignored. `lines` are the header's field
 * lines as received (`req.headersDistinct`): more than one is a repeated header. Throws
 * `FlightIdempotencyKeyInvalidError` when repeated, not a single sf-string (a bare token, a list, an
 * unescaped quote…), empty or too long.
 */
export function parseIdempotencyKey(lines: string | readonly string[], maxLength: number): string {
  if (typeof lines !== 'string') {
    if (lines.length !== 1) throw new FlightIdempotencyKeyInvalidError('the Idempotency-Key header must appear once');
    lines = lines[0]!;
  }
  let item: unknown;
  try {
    [item] = parseItem(lines);
  } catch (error) {
    throw new FlightIdempotencyKeyInvalidError('the Idempotency-Key is not a valid structured field string', { cause: error });
  }
  if (typeof item !== 'string') {
    throw new FlightIdempotencyKeyInvalidError('the Idempotency-Key must be a quoted string (RFC 8941 sf-string), e.g. "8e03978e-40d5"');
  }
  if (item.length === 0) throw new FlightIdempotencyKeyInvalidError('the Idempotency-Key is empty');
  if (item.length > maxLength) {
    throw new FlightIdempotencyKeyInvalidError(`the Idempotency-Key is longer than ${maxLength} characters`, {
      context: { length: item.length, maxLength },
    });
  }
  return item;
}

/** Most bytes of a refused request body read and thrown away so that its client can read the 413. */
export const MAX_DRAIN_BYTES = 16 * 1024 * 1024;

/**
 * After refusing a request body as too large (413): reads and throws away what the client is still
 * sending, up to `MAX_DRAIN_BYTES`, as HTTP servers do before they close ("lingering close"). Closing the
 * connection while the client is still writing its body resets it, and the client then fails on its next
 * write (EPIPE, ECONNRESET) before it reads the answer. Returns true when the connection must close at
 * once instead (the client declared more than the bound); a body that goes on past the bound closes it then.
 */
export function drainRefusedBody(req: IncomingMessage): boolean {
  const declared = declaredLength(req.headers);
  if (declared !== undefined && declared > MAX_DRAIN_BYTES) return true;
  if (req.readableEnded || req.destroyed) return false;
  let drained = 0;
  req.on('data', (chunk: Buffer | string) => {
    drained += chunk.length;
    if (drained > MAX_DRAIN_BYTES) req.socket?.destroy();
  });
  req.resume();
  return false;
}

/** One disconnect signal per HTTP/1 connection (see `disconnectSignal`). */
const connectionSignals = new WeakMap<Socket, AbortSignal>();

/**
 * An AbortSignal that fires when the client goes away before its response was sent (the connection
 * closed first). Used to detach a waiting follower; it never stops an owner's handler.
 *
 * On HTTP/1 the signal belongs to the connection and is made once for all the requests it carries (a
 * keep-alive connection carries thousands): a closed connection leaves no request on it to answer, and a
 * request whose response went out no longer listens. Listeners must be removed when their wait ends
 * (`untilAborted` does). Other transports get a signal per response.
 */
export function disconnectSignal(res: ServerResponse): AbortSignal {
  const { socket } = res;
  // Made late (adapters make it on first use): the client may be gone already.
  if (!res.writableFinished && (res.destroyed || socket?.destroyed === true)) return AbortSignal.abort(new Error('client disconnected'));
  if (socket && res.req?.httpVersionMajor === 1) {
    let signal = connectionSignals.get(socket);
    if (!signal) {
      signal = closeSignal(socket, () => true);
      connectionSignals.set(socket, signal);
    }
    return signal;
  }
  return closeSignal(res, () => !res.writableFinished);
}

/** A signal aborted when `emitter` emits `close` and `gone()` says the client went away. */
function closeSignal(emitter: Socket | ServerResponse, gone: () => boolean): AbortSignal {
  const controller = new AbortController();
  // Concurrent requests of one connection (pipelining) may each listen.
  setMaxListeners(0, controller.signal);
  emitter.once('close', () => {
    if (gone()) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}
