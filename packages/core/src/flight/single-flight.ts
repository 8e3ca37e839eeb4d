/**
 * Distributed single-flight (the seed's `DistributedInterviewAiSingleFlightService`).
 *
 * `execute(stage, key, supplier)`: L1 → in-process coalescing → session lock (heavy stages) →
 * acquire → owner path (markRunning, heartbeat, guard, codec, complete) or follower path (wait for
 * the terminal event, polling as a safety net, replay, take over a dead owner) or replay paths.
 * Modes `distributed`, `local` and `hybrid` (coordination failure → in-process single-flight).
 */
import { randomUUID } from 'node:crypto';
import { untilAborted } from '../abort.js';
import {
  FlightCancelledError,
  FlightCoordinationError,
  FlightFencedError,
  FlightLeaseLostError,
  FlightValidationError,
  FlightWaitTimeoutError,
  isCoordinationFailure,
  toCoordinationError,
} from '../errors.js';
import { FlightEvents } from '../events/emitter.js';
import type { FlightEventMap, FlightEventName, FlightRole, LeaseLossReason } from '../events/types.js';
import { toExecutionError, toFailureRecord } from '../failure/classify.js';
import { createGuard, type Guard } from '../guard/guard.js';
import { HeartbeatManager } from '../heartbeat/heartbeat-manager.js';
import { assertRequestKey, flightId } from '../keys/key-builder.js';
import { LocalSingleFlight } from '../local/local-single-flight.js';
import { assertStageName, leaseTerms, resolveStagePolicy, type StagePolicy } from '../policy/stage-policy.js';
import type { FailureRecord, FlightMeta, FlightRef } from '../state/types.js';
import { withSessionLock } from './session-lock-scope.js';
import type { ExecuteOptions, FlightResult, Supplier } from './types.js';
import { resolveOptions, type FlightMode, type ResolvedOptions, type SingleFlightOptions } from './options.js';

interface Outcome {
  value: unknown;
  role: FlightRole;
  epoch?: number | undefined;
}

type OwnerResult = { kind: 'value'; value: unknown } | { kind: 'fenced'; error: Error };

function failureOf(meta: FlightMeta): FailureRecord {
  return {
    type: meta.errorType || 'UNEXPECTED',
    code: meta.errorCode || 'E_UNEXPECTED',
    message: meta.errorMessage,
    retryable: meta.retryable,
  };
}

export class SingleFlight {
  readonly nodeId: string;
  readonly mode: FlightMode;
  private readonly options: ResolvedOptions;
  private readonly events: FlightEvents;
  private readonly local = new LocalSingleFlight();
  private readonly heartbeats: HeartbeatManager;
  private readonly policies = new Map<string, StagePolicy>();
  private readonly guards = new Map<string, Guard>();
  private readonly owners = new Map<string, AbortController>();
  private coordinatorDownUntil = 0;

  constructor(options: SingleFlightOptions = {}) {
    this.options = resolveOptions(options);
    this.nodeId = this.options.nodeId;
    this.mode = this.options.mode;
    this.events = new FlightEvents(this.options.logger);
    this.heartbeats = new HeartbeatManager(this.options.clock, this.options.logger);
    for (const stage of Object.keys(this.options.stages)) this.policy(stage);
  }

  /** Subscribes to lifecycle events; returns the unsubscribe function. */
  on<E extends FlightEventName>(event: E, listener: (payload: FlightEventMap[E]) => void): () => void {
    return this.events.on(event, listener);
  }

  /** The resolved policy of a stage. */
  policy(stage: string): StagePolicy {
    let policy = this.policies.get(stage);
    if (!policy) {
      policy = resolveStagePolicy(stage, this.options.defaults, this.options.stages[stage]);
      this.policies.set(stage, policy);
    }
    return policy;
  }

  /** True while hybrid mode is serving from the local fallback. */
  get degraded(): boolean {
    return this.mode === 'hybrid' && this.options.clock.now() < this.coordinatorDownUntil;
  }

  /** Runs `supplier` once across the cluster for (stage, key) and returns the value with its role. */
  async execute<T>(stage: string, key: string, supplier: Supplier<T>, options: ExecuteOptions = {}): Promise<FlightResult<T>> {
    const startedAt = this.options.clock.now();
    let role: FlightRole | 'none' = 'none';
    let shared = false;
    let failure: unknown;
    try {
      assertStageName(stage);
      assertRequestKey(key, stage);
      if (typeof supplier !== 'function') throw new FlightValidationError('supplier must be a function', { context: { stage, key } });
      const policy = this.policy(stage);
      const id = flightId({ stage, key });
      if (policy.l1.enabled) {
        const hit = this.options.replayCache.get(id);
        if (hit) {
          role = 'l1';
          shared = true;
          this.events.emit('l1', { stage, key });
          return { value: hit.value as T, role, shared, stage, key };
        }
      }
      const result = await this.local.do(id, () => this.runFlight(stage, key, supplier, policy, options.sessionId, options.localFallback), {
        signal: options.signal,
      });
      // Callers that joined another caller's run on this node followed it; they did not run the supplier.
      role = !result.leader && result.value.role === 'owner' ? 'follower' : result.value.role;
      shared = result.shared || role === 'follower' || role === 'replay';
      return { value: result.value.value as T, role, shared, stage, key, epoch: result.value.epoch };
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      const e = failure as { errorType?: any; code?: string } | undefined;
      this.events.emit('settled', {
        stage,
        key,
        role,
        shared,
        ok: failure === undefined,
        durationMs: this.options.clock.now() - startedAt,
        errorType: e?.errorType,
        errorCode: e?.code,
      });
    }
  }

  /** `execute`, returning only the value. */
  async run<T>(stage: string, key: string, supplier: Supplier<T>, options?: ExecuteOptions): Promise<T> {
    return (await this.execute(stage, key, supplier, options)).value;
  }

  /**
   * Cancels an active flight cluster-wide: the owner's signal aborts, followers get
   * `FlightCancelledError`. Resolves `false` when no active flight was found.
   */
  async cancel(stage: string, key: string, reason = 'cancelled'): Promise<boolean> {
    assertStageName(stage);
    assertRequestKey(key, stage);
    const policy = this.policy(stage);
    const ref = { stage, key };
    const reply = await this.call(() => this.options.coordinator.cancel(ref, { reason, ttlMs: policy.terminalTtlMs }), ref);
    this.owners.get(flightId(ref))?.abort(new FlightCancelledError(`flight cancelled: ${reason}`, { context: ref }));
    return reply.ok;
  }

  /** Forgets a key's L1 entry and lets the next call start a new in-process execution. */
  forget(stage: string, key: string): void {
    const id = flightId({ stage, key });
    this.options.replayCache.delete(id);
    this.local.forget(id);
  }

  /** Stops heartbeats and closes the coordinator if this instance created it. */
  async close(): Promise<void> {
    for (const controller of this.owners.values()) controller.abort(new FlightLeaseLostError('single-flight closed'));
    if (this.options.ownsCoordinator) await this.options.coordinator.close();
  }

  private async runFlight(
    stage: string,
    key: string,
    supplier: Supplier<unknown>,
    policy: StagePolicy,
    sessionId?: string,
    localFallback = true,
  ) {
    if (this.mode === 'local') return this.runLocal(stage, key, supplier, policy, sessionId);
    if (this.mode === 'distributed') return this.runDistributed(stage, key, supplier, policy, sessionId);
    if (!localFallback) {
      if (this.degraded) throw new FlightCoordinationError('coordinator cooling down; this call may not run in-process', { context: { stage, key } });
      return this.runDistributed(stage, key, supplier, policy, sessionId);
    }
    if (this.degraded) {
      this.events.emit('fallback', { stage, key, error: 'coordinator cooling down' });
      return this.runLocal(stage, key, supplier, policy, sessionId);
    }
    try {
      return await this.runDistributed(stage, key, supplier, policy, sessionId);
    } catch (error) {
      if (!isCoordinationFailure(error)) throw error;
      this.coordinatorDownUntil = this.options.clock.now() + this.options.fallbackCooldownMs;
      this.options.logger.warn({ stage, key, err: error }, 'coordination failed; serving from the in-process single-flight');
      this.events.emit('fallback', { stage, key, error: (error as Error).message });
      return this.runLocal(stage, key, supplier, policy, sessionId);
    }
  }

  /**
   * Runs `fn` holding the session lock when the stage asks for it (heavy stages): only a run's owner takes
   * it, so identical requests follow the run instead of queueing. The lock is renewed while held.
   */
  private withSessionLock<T>(policy: StagePolicy, sessionId: string | undefined, signal: AbortSignal, fn: () => Promise<T>) {
    if (!policy.sessionLock.enabled || !sessionId) return fn();
    const { sessionLock, localSessionLock, clock, logger } = this.options;
    const scope = { lock: sessionLock, fallback: this.mode === 'hybrid' ? localSessionLock : undefined, clock, logger };
    return withSessionLock(scope, sessionId, { ttlMs: policy.sessionLock.ttlMs, waitMs: policy.sessionLock.waitMs }, signal, fn);
  }

  private guard(policy: StagePolicy): Guard {
    let guard = this.guards.get(policy.stage);
    if (!guard) this.guards.set(policy.stage, (guard = createGuard(policy)));
    return guard;
  }

  private async call<T>(fn: () => Promise<T>, ref: FlightRef): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw toCoordinationError(error, { ...ref });
    }
  }

  /**
   * `call`, repeated once when the first attempt's outcome is unknown (no reply by the deadline: it may
   * have landed). Safe because every coordinator operation is idempotent for the same arguments (the same
   * owner token or fence): a landed acquire answers the same epoch again, a landed complete answers OK.
   */
  private async callIdempotent<T>(operation: string, fn: () => Promise<T>, ref: FlightRef): Promise<T> {
    try {
      return await this.call(fn, ref);
    } catch (error) {
      if (!(error instanceof FlightCoordinationError) || !error.outcomeUnknown) throw error;
      this.options.logger.warn({ ...ref, operation, err: error }, 'no reply by the deadline; repeating the idempotent call once');
      return this.call(fn, ref);
    }
  }

  private remember(ref: FlightRef, value: unknown, policy: StagePolicy): void {
    if (policy.l1.enabled) this.options.replayCache.set(flightId(ref), value, policy.l1.ttlMs);
  }

  /** Encodes then decodes, so every role returns the same shape of value and the size cap holds everywhere. */
  private roundTrip(value: unknown, policy: StagePolicy): { payload: string; value: unknown } {
    const { codec } = this.options;
    const limits = { maxBytes: policy.maxResultBytes };
    if (codec.encodeWithCopy) return codec.encodeWithCopy(value, limits);
    const payload = codec.encode(value, limits);
    return { payload, value: codec.decode(payload, limits) };
  }

  private async runLocal(
    stage: string,
    key: string,
    supplier: Supplier<unknown>,
    policy: StagePolicy,
    sessionId: string | undefined,
  ): Promise<Outcome> {
    const controller = new AbortController();
    let value: unknown;
    try {
      value = await this.withSessionLock(policy, sessionId, controller.signal, () => {
        this.events.emit('run', { stage, key, role: 'local', attempt: 1 });
        return this.guard(policy).execute(
          async (signal) => supplier({ signal, stage, key, role: 'local', epoch: undefined, attempt: 1, progress() {} }),
          controller.signal,
        );
      });
      value = this.roundTrip(value, policy).value;
    } catch (error) {
      throw toExecutionError(toFailureRecord(error, policy), { stage, key, replayed: false, cause: error });
    }
    this.remember({ stage, key }, value, policy);
    return { value, role: 'local' };
  }

  private async runDistributed(
    stage: string,
    key: string,
    supplier: Supplier<unknown>,
    policy: StagePolicy,
    sessionId: string | undefined,
  ): Promise<Outcome> {
    const { coordinator, clock } = this.options;
    const ref = { stage, key };
    const lease = leaseTerms(policy);
    let joinEpoch: number | undefined;
    let waitStartedAt: number | undefined;
    let woken: 'event' | 'poll' = 'poll';
    let ownerAttempts = 0;
    let lastError: Error | undefined;
    for (;;) {
      const input = { ...ref, ...lease, sessionId, ownerId: this.nodeId, ownerToken: randomUUID(), joinEpoch };
      const reply = await this.callIdempotent('acquire', () => coordinator.acquire(input), ref);
      const { meta } = reply;
      const waited = () => {
        if (waitStartedAt !== undefined) this.events.emit('waited', { ...ref, waitedMs: clock.now() - waitStartedAt, woken });
      };
      switch (reply.outcome) {
        case 'REPLAY_SUCCESS': {
          let value: unknown;
          try {
            value = this.options.codec.decode(reply.result ?? '', { maxBytes: policy.maxResultBytes });
          } catch (error) {
            const action = policy.onCorruptResult;
            this.events.emit('corrupt', { ...ref, error: (error as Error).message, action });
            this.options.logger.error({ ...ref, err: error, action }, 'stored result failed verification');
            if (action === 'error') throw error;
            return await this.runLocal(stage, key, supplier, policy, sessionId);
          }
          this.remember(ref, value, policy);
          const role: FlightRole = joinEpoch === undefined ? 'replay' : 'follower';
          if (role === 'replay') this.events.emit('replay', { ...ref, outcome: 'success' });
          waited();
          return { value, role, epoch: meta.epoch };
        }
        case 'REPLAY_FAILURE': {
          waited();
          if (meta.status === 'CANCELLED') {
            throw new FlightCancelledError(`flight cancelled: ${meta.errorMessage}`, { context: { ...ref, epoch: meta.epoch } });
          }
          if (joinEpoch === undefined) this.events.emit('replay', { ...ref, outcome: 'failure' });
          throw toExecutionError(failureOf(meta), { ...ref, replayed: true });
        }
        case 'FOLLOWER_WAIT': {
          if (joinEpoch !== meta.epoch) this.events.emit('follower', { ...ref, epoch: meta.epoch, ownerId: meta.ownerId });
          joinEpoch = meta.epoch;
          waitStartedAt ??= clock.now();
          const remaining = policy.waitTimeoutMs - (clock.now() - waitStartedAt);
          if (remaining <= 0) {
            this.events.emit('waited', { ...ref, waitedMs: clock.now() - waitStartedAt, woken: 'timeout' });
            throw new FlightWaitTimeoutError(`waited ${policy.waitTimeoutMs} ms for the owner of ${stage}`, {
              context: { ...ref, epoch: meta.epoch, ownerId: meta.ownerId },
            });
          }
          const event = await coordinator
            .waitForTerminal(ref, { epoch: meta.epoch, timeoutMs: Math.min(policy.pollIntervalMs, remaining) })
            .catch(() => null);
          woken = event ? 'event' : 'poll';
          // A small result travels with the notice: verified like a stored one, it saves the replay's round
          // trip. Only for the epoch followed; anything else (or a value that fails to decode) asks again.
          if (event?.status === 'SUCCEEDED' && event.epoch === meta.epoch && typeof event.result === 'string') {
            let value: unknown;
            let decoded = false;
            try {
              value = this.options.codec.decode(event.result, { maxBytes: policy.maxResultBytes });
              decoded = true;
            } catch (error) {
              this.options.logger.warn({ ...ref, err: error }, 'result carried by the terminal event failed verification; reading it instead');
            }
            if (decoded) {
              this.remember(ref, value, policy);
              waited();
              return { value, role: 'follower', epoch: meta.epoch };
            }
          }
          continue;
        }
        case 'OWNER_NEW':
        case 'OWNER_TAKEOVER': {
          if (ownerAttempts >= policy.maxAttempts) throw lastError ?? new FlightFencedError('too many ownership attempts', { context: ref });
          ownerAttempts++;
          if (reply.outcome === 'OWNER_TAKEOVER') {
            this.events.emit('takeover', { ...ref, epoch: meta.epoch, previousEpoch: joinEpoch ?? 0, previousStatus: 'taken-over' });
          }
          const result = await this.ownerRun(meta, supplier, policy, ownerAttempts, reply.outcome === 'OWNER_TAKEOVER', sessionId);
          if (result.kind === 'value') return { value: result.value, role: 'owner', epoch: meta.epoch };
          lastError = result.error;
          joinEpoch = meta.epoch;
          continue;
        }
      }
    }
  }

  private async ownerRun(
    meta: FlightMeta,
    supplier: Supplier<unknown>,
    policy: StagePolicy,
    attempt: number,
    takeover: boolean,
    sessionId: string | undefined,
  ): Promise<OwnerResult> {
    const { coordinator, logger } = this.options;
    const ref = { stage: meta.stage, key: meta.requestKey };
    const fence = { ...ref, ownerId: meta.ownerId, ownerToken: meta.ownerToken, epoch: meta.epoch };
    const lease = leaseTerms(policy);
    const fencedResult = (operation: string): OwnerResult => {
      this.events.emit('fenced', { ...ref, epoch: meta.epoch, operation });
      logger.warn({ ...ref, epoch: meta.epoch, operation }, 'owner write fenced: a newer owner holds the flight');
      return { kind: 'fenced', error: new FlightFencedError(`${operation} refused: epoch ${meta.epoch} no longer owns the flight`, { context: ref }) };
    };
    this.events.emit('owner', { ...ref, epoch: meta.epoch, takeover });
    const running = await this.callIdempotent('markRunning', () => coordinator.markRunning(fence, lease), ref);
    if (!running.ok) return fencedResult('markRunning');

    const id = flightId(ref);
    const controller = new AbortController();
    let lostReason: LeaseLossReason | undefined;
    this.owners.set(id, controller);
    const task = this.heartbeats.start({
      requestKey: `${ref.stage}|${ref.key}`,
      ownerToken: meta.ownerToken,
      logFields: { ...ref, epoch: meta.epoch },
      intervalMs: policy.heartbeatIntervalMs,
      takeoverAfterMs: policy.takeoverAfterMs,
      maxRunMs: policy.maxRunMs,
      stallTimeoutMs: policy.stallTimeoutMs,
      renew: async () => {
        const reply = await coordinator.heartbeat(fence, lease);
        if (reply.ok) return 'ok';
        return reply.status === 'EXPIRED' ? 'expired' : reply.status === 'CANCELLED' ? 'cancelled' : 'fenced';
      },
      onLost: (reason) => {
        lostReason = reason;
        const error =
          reason === 'cancelled'
            ? new FlightCancelledError('flight cancelled', { context: ref })
            : new FlightLeaseLostError(`owner lost its lease (${reason})`, { context: { ...ref, epoch: meta.epoch, reason } });
        this.events.emit('lease-lost', { ...ref, epoch: meta.epoch, reason });
        logger.warn({ ...ref, epoch: meta.epoch, reason }, 'owner lease lost; aborting the run');
        controller.abort(error);
        if (reason === 'max-run-time') {
          coordinator.expire(ref, { ttlMs: policy.terminalTtlMs }).catch((err) => logger.warn({ ...ref, err }, 'expire failed'));
        }
      },
    });
    try {
      let payload: string;
      let value: unknown;
      try {
        // Raced with the lease: once it is lost the run stops counting, even if the supplier ignores its signal.
        const raw = await untilAborted(
          this.withSessionLock(policy, sessionId, controller.signal, () => {
            this.events.emit('run', { ...ref, role: 'owner', attempt });
            return this.guard(policy).execute(
              async (signal) =>
                supplier({ signal, ...ref, role: 'owner', epoch: meta.epoch, attempt, progress: () => task.progress() }),
              controller.signal,
            );
          }),
          controller.signal,
        );
        ({ payload, value } = this.roundTrip(raw, policy));
      } catch (error) {
        const lost = controller.signal.aborted ? (controller.signal.reason as Error) : undefined;
        if (lost instanceof FlightCancelledError) return { kind: 'fenced', error: lost };
        const failure: FailureRecord = lost
          ? { type: 'TIMEOUT', code: FlightLeaseLostError.code, message: lost.message, retryable: true }
          : toFailureRecord(error, policy);
        let written;
        try {
          written = await this.callIdempotent('fail', () => coordinator.fail(fence, { failure, ttlMs: policy.failureTtlMs }), ref);
        } catch (writeError) {
          logger.warn({ ...ref, err: writeError }, 'could not record the failure');
          this.events.emit('coordination-error', { ...ref, error: (writeError as Error).message });
        }
        // Follow whoever holds the flight now, unless this run itself timed out (max run time, stall,
        // failed renewals, server-side expiry): then its callers get the typed TIMEOUT at once.
        if (written && !written.ok && (!lost || lostReason === 'fenced')) return fencedResult('fail');
        throw toExecutionError(failure, { ...ref, replayed: false, cause: error });
      }
      try {
        const written = await this.callIdempotent(
          'complete',
          () => coordinator.complete(fence, { result: payload, resultTtlMs: policy.resultTtlMs }),
          ref,
        );
        if (!written.ok) return fencedResult('complete');
        this.events.emit('completed', { ...ref, epoch: meta.epoch, followers: written.meta.followers });
      } catch (error) {
        // The value is right; only sharing it failed. This node's callers still get it.
        logger.warn({ ...ref, err: error }, 'could not store the result; returning it to local callers only');
        this.events.emit('coordination-error', { ...ref, error: (error as Error).message });
      }
      this.remember(ref, value, policy);
      return { kind: 'value', value };
    } finally {
      this.heartbeats.stop(task.taskKey);
      if (this.owners.get(id) === controller) this.owners.delete(id);
    }
  }
}

/** Creates a single-flight instance. */
export function createSingleFlight(options?: SingleFlightOptions): SingleFlight {
  return new SingleFlight(options);
}
