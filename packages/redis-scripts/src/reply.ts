/** Decodes the scripts' replies `{ code, flat meta, result | false }` into core's types. */
import { FLIGHT_STATUSES, FlightCoordinationError, type FlightMeta } from '@flight/core';

export interface ScriptReply {
  code: string;
  meta: FlightMeta | null;
  result: string | undefined;
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'number') return String(value);
  throw new FlightCoordinationError(`unexpected script reply element ${typeof value}`);
}

const STATUSES = new Set<string>(FLIGHT_STATUSES);

/** Every field starts undefined (one object shape); a field the reply lacks stays undefined. */
function emptyMeta(): Record<keyof FlightMeta, unknown> {
  return {
    status: undefined,
    stage: undefined,
    requestKey: undefined,
    sessionId: undefined,
    ownerId: undefined,
    ownerToken: undefined,
    epoch: undefined,
    takeovers: undefined,
    followers: undefined,
    createdAt: undefined,
    updatedAt: undefined,
    heartbeatAt: undefined,
    expireAt: undefined,
    deadlineAt: undefined,
    retryable: undefined,
    errorType: undefined,
    errorCode: undefined,
    errorMessage: undefined,
    resultRef: undefined,
  };
}

export function decodeMeta(flat: unknown): FlightMeta | null {
  if (!Array.isArray(flat) || flat.length === 0) return null;
  const meta = emptyMeta();
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const field = text(flat[i]);
    const value = text(flat[i + 1]);
    switch (field) {
      case 'epoch':
      case 'takeovers':
      case 'followers':
      case 'createdAt':
      case 'updatedAt':
      case 'heartbeatAt':
      case 'expireAt':
      case 'deadlineAt':
        meta[field] = Number(value);
        break;
      case 'retryable':
        meta.retryable = value === '1';
        break;
      case 'status':
      case 'stage':
      case 'requestKey':
      case 'sessionId':
      case 'ownerId':
      case 'ownerToken':
      case 'errorType':
      case 'errorCode':
      case 'errorMessage':
      case 'resultRef':
        meta[field] = value;
        break;
      default:
      // Unknown fields are not part of the record.
    }
  }
  if (!STATUSES.has(meta.status as string)) {
    throw new FlightCoordinationError(`unexpected flight status ${String(meta.status)}`);
  }
  return meta as unknown as FlightMeta;
}

export function decodeReply(raw: unknown): ScriptReply {
  if (!Array.isArray(raw) || raw.length < 2) throw new FlightCoordinationError('unexpected script reply shape');
  const result = raw[2];
  return {
    code: text(raw[0]),
    meta: decodeMeta(raw[1]),
    result: result === null || result === undefined || result === false || result === 0 ? undefined : text(result),
  };
}
