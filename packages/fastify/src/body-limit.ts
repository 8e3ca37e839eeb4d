/**
 * The request body limit of a coalesced route (`maxRequestBodyBytes`), enforced in a route-level
 * `preParsing` hook: Fastify parses the body before the handler runs, so the limit must apply before.
 * A declared `Content-Length` above it is refused at once; an idempotent request's body is counted as it
 * streams. The typed `FlightBodyTooLargeError` (413) goes to the route's error handler, as Fastify's own
 * body-limit error does.
 */
import { Transform, type TransformCallback } from 'node:stream';
import type { FastifyReply, FastifyRequest, RequestPayload } from 'fastify';
import { declaredLength, FlightBodyTooLargeError, type ResolvedHttpFlightOptions } from '@flight/http-shared';

type LimitOptions = Pick<ResolvedHttpFlightOptions<unknown>, 'maxRequestBodyBytes' | 'idempotency'>;

/** The 413 error, with the `statusCode` Fastify's body parser keeps (it answers 400 to a stream error without one). */
function tooLarge(limit: number, size: number): FlightBodyTooLargeError {
  const error = new FlightBodyTooLargeError(`request body of ${size} bytes is above the limit of ${limit} bytes`, {
    context: { limit, size },
  });
  return Object.assign(error, { statusCode: error.status });
}

/** Passes a body through, failing with `FlightBodyTooLargeError` once more than `limit` bytes went by. */
class BodyLimit extends Transform {
  private size = 0;

  constructor(
    private readonly source: RequestPayload,
    private readonly limit: number,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.size += chunk.length;
    if (this.size <= this.limit) return callback(null, chunk);
    this.source.unpipe(this);
    // Drain (and discard) the rest so the client can read the 413.
    this.source.resume();
    callback(tooLarge(this.limit, this.size));
  }
}

/** The `preParsing` hook of one coalesced route. */
export function bodyLimitHook(options: LimitOptions) {
  const limit = options.maxRequestBodyBytes;
  const { idempotency } = options;
  return async function flightBodyLimit(request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload): Promise<RequestPayload> {
    const declared = declaredLength(request.headers);
    if (declared !== undefined && declared > limit) throw tooLarge(limit, declared);
    if (!idempotency?.methods.has(request.method) || request.headers[idempotency.header] === undefined) return payload;
    const limited = new BodyLimit(payload, limit);
    payload.on('error', (error) => limited.destroy(error));
    return payload.pipe(limited);
  };
}
