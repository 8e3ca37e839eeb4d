/** Decodes the scripts' replies `{ code, flat meta, result | false }` into core's types. */
import { FLIGHT_STATUSES, FlightCoordinationError, type FailureType, type FlightMeta, type FlightStatus } from '@flight/core';

export interface ScriptReply {
  code: string;
  meta: FlightMeta | null;
  result: string | undefined;
}

const NUMERIC = new Set(['epoch', 'takeovers', 'createdAt', 'updatedAt', 'heartbeatAt', 'expireAt', 'deadlineAt']);

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'number') return String(value);
  throw new FlightCoordinationError(`unexpected script reply element ${typeof value}`);
}

export function decodeMeta(flat: unknown): FlightMeta | null {
  if (!Array.isArray(flat) || flat.length === 0) return null;
  const fields: Record<string, unknown> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const field = text(flat[i]);
    const value = text(flat[i + 1]);
    if (NUMERIC.has(field)) fields[field] = Number(value);
    else if (field === 'retryable') fields[field] = value === '1';
    else fields[field] = value;
  }
  if (!FLIGHT_STATUSES.includes(fields.status as FlightStatus)) {
    throw new FlightCoordinationError(`unexpected flight status ${String(fields.status)}`);
  }
  return {
    status: fields.status as FlightStatus,
    stage: fields.stage as string,
    requestKey: fields.requestKey as string,
    sessionId: fields.sessionId as string,
    ownerId: fields.ownerId as string,
    ownerToken: fields.ownerToken as string,
    epoch: fields.epoch as number,
    takeovers: fields.takeovers as number,
    createdAt: fields.createdAt as number,
    updatedAt: fields.updatedAt as number,
    heartbeatAt: fields.heartbeatAt as number,
    expireAt: fields.expireAt as number,
    deadlineAt: fields.deadlineAt as number,
    retryable: fields.retryable as boolean,
    errorType: fields.errorType as FailureType | '',
    errorCode: fields.errorCode as string,
    errorMessage: fields.errorMessage as string,
    resultRef: fields.resultRef as string,
  };
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
