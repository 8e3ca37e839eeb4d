/**
 * The read-only view of the flights a coordinator shares (`RedisCoordinator.inspect` and `listFlights`),
 * for operators: one flight by stage and key, or a stage's flights found by `SCAN` (on every master of a
 * cluster), or every stage's. It reads records with plain `GET`s and writes nothing; an owner's token never leaves it.
 */
import { FlightValidationError } from '@flight/core';
import { assertStageName, isActive, transitions, type FlightMeta, type FlightStatus } from '@flight/core/adapter';
import type { RedisDriver } from '../driver';
import { parseFlightKey, stageKeyPattern } from '../keys';
import type { RunKeys } from '../flight-keys-of';
import { decodeStoredFlight, textFieldsOf } from '../spine/reply';

/** What an operator may see of one flight. */
export interface FlightInspection {
  stage: string;
  /** The request key, when the caller named it (`inspect`); a listing knows only the digest. */
  key?: string;
  /** The flight's hash tag: a digest of stage and key, as it appears in the Redis key. */
  digest: string;
  /** The Redis key holding the flight. */
  redisKey: string;
  status: FlightStatus;
  epoch: number;
  takeovers: number;
  /** Since the flight's run was created (ms). */
  ageMs: number;
  /** The owner's node name (`nodeId`); never its token. */
  owner: string;
  /** Since the owner's last heartbeat (ms), while the run is PENDING or RUNNING. */
  heartbeatAgeMs?: number;
  /** Callers of other nodes (one per node) that joined the run. */
  followers: number;
  /** Bytes of the stored result (SUCCEEDED). */
  resultBytes?: number;
  /** Until the lease (PENDING, RUNNING) or the stored outcome ends (ms; by this process's clock). */
  expiresInMs: number;
  /** Forgotten cluster-wide: its result is no longer served. */
  forgotten: boolean;
  /** The failure of a FAILED run: its type and code (the message stays in Redis). */
  failure?: { type: string; code: string; retryable: boolean };
}

export interface ListFlightsOptions {
  /** Only this stage's flights. @default every stage */
  stage?: string;
  /** Also finished flights (SUCCEEDED, FAILED, …) still stored, not only those in progress. @default false */
  all?: boolean;
  /** At most this many. @default 100 */
  limit?: number;
}

export interface Inspector {
  inspect(stage: string, key: string): Promise<FlightInspection | null>;
  listFlights(options: ListFlightsOptions): Promise<FlightInspection[]>;
}

/** Largest `limit` of `listFlights`. */
export const MAX_LIST_LIMIT = 10_000;
const SCAN_COUNT = 500;

function inspection(stage: string, keys: { tag: string; meta: string }, stored: Buffer, now: number): FlightInspection {
  const meta: FlightMeta = decodeStoredFlight(stored.toString('utf8'), { stage, key: '' }).meta;
  const view: FlightInspection = {
    stage,
    digest: keys.tag,
    redisKey: keys.meta,
    status: meta.status,
    epoch: meta.epoch,
    takeovers: meta.takeovers,
    ageMs: Math.max(0, now - meta.createdAt),
    owner: meta.ownerId,
    followers: meta.followers,
    expiresInMs: Math.max(0, meta.expireAt - now),
    forgotten: transitions.isForgotten(meta),
  };
  if (isActive(meta.status)) view.heartbeatAgeMs = Math.max(0, now - meta.heartbeatAt);
  // The result is what the key holds after the record's text fields.
  if (meta.status === 'SUCCEEDED') view.resultBytes = stored.length - textFieldsOf(stored);
  if (meta.status === 'FAILED') view.failure = { type: meta.errorType, code: meta.errorCode, retryable: meta.retryable };
  return view;
}

export function createInspector(driver: RedisDriver, prefix: string, keysOf: (ref: { stage: string; key: string }) => RunKeys): Inspector {
  const read = (key: string): Promise<Buffer | null> => {
    if (!driver.getBuffer) throw new FlightValidationError('this client cannot read keys (RedisDriver.getBuffer)');
    return driver.getBuffer(key);
  };
  return {
    async inspect(stage, key) {
      assertStageName(stage);
      const keys = keysOf({ stage, key });
      const stored = await read(keys.meta);
      return stored === null ? null : { ...inspection(stage, keys, stored, Date.now()), key };
    },

    async listFlights({ stage, all = false, limit = 100 }) {
      if (stage !== undefined) assertStageName(stage);
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
        throw new FlightValidationError(`limit must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${String(limit)}`);
      }
      if (!driver.scan) throw new FlightValidationError('this client cannot list keys (RedisDriver.scan)');
      const found = new Map<string, FlightInspection>();
      for await (const batch of driver.scan(stageKeyPattern(prefix, stage), SCAN_COUNT)) {
        const fresh = batch.filter((redisKey) => !found.has(redisKey));
        const values = await Promise.all(fresh.map((redisKey) => read(redisKey)));
        const now = Date.now();
        fresh.forEach((redisKey, i) => {
          const parsed = parseFlightKey(prefix, redisKey);
          const stored = values[i];
          if (!parsed || (stage !== undefined && parsed.stage !== stage) || !stored || found.size >= limit) return;
          const view = inspection(parsed.stage, { tag: parsed.tag, meta: redisKey }, stored, now);
          if (all || isActive(view.status)) found.set(redisKey, view);
        });
        if (found.size >= limit) break;
      }
      return [...found.values()].sort((a, b) => b.ageMs - a.ageMs);
    },
  };
}
