/**
 * The embedded coordinator: the state machine in process memory. It is the default for one process
 * and for tests, and it passes the same conformance suite as the Redis coordinators.
 */
import { systemClock, type Clock } from '../ports/clock.js';
import { flightId } from '../keys/key-builder.js';
import * as machine from '../state/transitions.js';
import { isActive, type FlightMeta, type FlightRecord, type FlightRef, type StaleCopy, type TerminalEvent } from '../state/types.js';
import type { InspectableCoordinator } from '../ports/coordinator.js';
import type { StreamingFlightCoordinator } from '../ports/stream-coordinator.js';
import { createMemoryStreams } from '../stream/memory-streams.js';

export interface MemoryCoordinatorOptions {
  /** Source of time for lease arithmetic. @default the system clock */
  clock?: Clock;
  /**
   * A SUCCEEDED event carries the stored result when it is at most this many bytes (UTF-8), so
   * followers need no second read; 0 turns it off. @default 8192 (the Redis coordinators' default)
   */
  inlineResultBytes?: number;
}

/** Default of `inlineResultBytes`, shared with the Redis coordinators. */
export const DEFAULT_INLINE_RESULT_BYTES = 8192;

interface Waiter {
  epoch: number;
  resolve: (event: TerminalEvent | null) => void;
}

export interface MemoryCoordinator extends StreamingFlightCoordinator, InspectableCoordinator {
  /** Live records (expired ones are swept first). */
  size(): number;
  /** Live run streams (see `executeStream`). */
  streams(): number;
}

/**
 * Records and replies hold only primitives one level down (`meta`, a result string), so a shallow copy of
 * that level isolates the store from callers as `structuredClone` would, at a fraction of its cost.
 */
const copyRecord = (record: FlightRecord): FlightRecord => ({ ...record, meta: { ...record.meta } });
const copyReply = <R>(reply: R): R => {
  const meta = (reply as { meta?: FlightMeta }).meta;
  return meta ? { ...reply, meta: { ...meta } } : { ...reply };
};

export function createMemoryCoordinator(options: MemoryCoordinatorOptions = {}): MemoryCoordinator {
  const clock = options.clock ?? systemClock;
  const inlineLimit = Math.max(0, options.inlineResultBytes ?? DEFAULT_INLINE_RESULT_BYTES);
  /** The event of a terminal record, with the result inlined when it is small enough. */
  const withResult = (event: TerminalEvent, record: FlightRecord | null | undefined): TerminalEvent => {
    const result = record?.result;
    // Bytes never ride in an event (events carry text); a follower reads them.
    if (event.status !== 'SUCCEEDED' || typeof result !== 'string' || inlineLimit === 0) return event;
    // UTF-8 is at most 3 bytes per UTF-16 unit: skip the byte count when the length alone decides.
    if (result.length * 3 > inlineLimit && Buffer.byteLength(result, 'utf8') > inlineLimit) return event;
    return { ...event, result };
  };
  const records = new Map<string, FlightRecord>();
  /** Each flight's stale copy (transitions.ts `StaleCopy`), kept while it may be served. */
  const staleCopies = new Map<string, StaleCopy>();
  const waiters = new Map<string, Set<Waiter>>();
  let writes = 0;

  const sweep = () => {
    const now = clock.now();
    for (const [id, record] of records) if (!machine.isLive(record, now)) records.delete(id);
    for (const [id, copy] of staleCopies) if (!machine.isStaleLive(copy, now)) staleCopies.delete(id);
  };

  const readStale = (id: string): StaleCopy | null => {
    const copy = staleCopies.get(id);
    if (copy && !machine.isStaleLive(copy, clock.now())) {
      staleCopies.delete(id);
      return null;
    }
    return copy ?? null;
  };

  const read = (ref: FlightRef): FlightRecord | null => {
    const id = flightId(ref);
    const record = records.get(id);
    if (record && !machine.isLive(record, clock.now())) {
      records.delete(id);
      return null;
    }
    return record ?? null;
  };

  const { recordChanged, readersOf, ...streams } = createMemoryStreams({ clock, read });

  function apply<R>(
    ref: FlightRef,
    step: (record: FlightRecord | null, now: number, stale: StaleCopy | null) => machine.Transition<R>,
  ): Promise<R> {
    const id = flightId(ref);
    const previous = read(ref);
    const previousEpoch = previous?.meta.epoch;
    const { reply, next, event, stale } = step(previous, clock.now(), readStale(id));
    if (stale === null) staleCopies.delete(id);
    else if (stale) staleCopies.set(id, { ...stale });
    if (next) {
      records.set(id, copyRecord(next));
      // Stream readers of the flight learn of a new run (a takeover) or its end at once, not at their poll.
      if (previousEpoch !== next.meta.epoch || !isActive(next.meta.status)) recordChanged(ref);
    }
    // A sweep walks every record: spaced by at least as many writes as there are records, it costs O(1) per write.
    if (++writes >= Math.max(1000, records.size)) {
      writes = 0;
      sweep();
    }
    if (event) {
      const set = waiters.get(id);
      if (set) {
        const published = withResult(event, next);
        for (const waiter of [...set]) if (event.epoch >= waiter.epoch) waiter.resolve({ ...published });
      }
    }
    return Promise.resolve(copyReply(reply));
  }

  return {
    ...streams,
    acquire: (input) => apply(input, (r, now, stale) => machine.acquire(r, input, now, stale)),
    markRunning: (fence, lease) => apply(fence, (r, now) => machine.markRunning(r, fence, lease, now)),
    heartbeat: (fence, lease) => apply(fence, (r, now) => machine.heartbeat(r, fence, lease, now)),
    complete: (fence, input) => apply(fence, (r, now) => machine.complete(r, fence, input, now)),
    fail: (fence, input) => apply(fence, (r, now) => machine.fail(r, fence, input, now)),
    cancel: (ref, input) => apply(ref, (r, now) => machine.cancel(r, ref, input, now)),
    expire: (ref, input) => apply(ref, (r, now) => machine.expire(r, ref, input, now)),
    forget: (ref) => apply(ref, (r, now) => machine.forget(r, ref, now)),
    readMeta: async (ref) => {
      const meta = read(ref)?.meta;
      return meta ? { ...meta } : null;
    },
    keepsStaleCopies: true,
    readStale: async (ref) => {
      const copy = readStale(flightId(ref));
      return copy ? { ...copy } : null;
    },
    readResult: async (ref) => {
      const record = read(ref);
      return record?.meta.status === 'SUCCEEDED' && !machine.isForgotten(record.meta) ? (record.result ?? null) : null;
    },
    // Each waiter counts as a node: callers of one node join in-process and never wait here together.
    waitingNodes: (ref) => Promise.resolve((waiters.get(flightId(ref))?.size ?? 0) + readersOf(ref)),
    waitForTerminal(ref, { epoch, timeoutMs, signal }) {
      const record = read(ref);
      if (record && record.meta.epoch >= epoch && !['PENDING', 'RUNNING'].includes(record.meta.status)) {
        const { meta } = record;
        return Promise.resolve(withResult({ stage: meta.stage, key: meta.requestKey, status: meta.status, epoch: meta.epoch }, record));
      }
      const id = flightId(ref);
      return new Promise((resolve) => {
        let set = waiters.get(id);
        if (!set) waiters.set(id, (set = new Set()));
        const waiter: Waiter = {
          epoch,
          resolve: (event) => {
            clock.clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            set.delete(waiter);
            if (set.size === 0 && waiters.get(id) === set) waiters.delete(id);
            resolve(event);
          },
        };
        const onAbort = () => waiter.resolve(null);
        const timer = clock.setTimeout(() => waiter.resolve(null), timeoutMs);
        signal?.addEventListener('abort', onAbort, { once: true });
        set.add(waiter);
        if (signal?.aborted) onAbort();
      });
    },
    size() {
      sweep();
      return records.size;
    },
    async close() {
      for (const set of waiters.values()) for (const waiter of [...set]) waiter.resolve(null);
      waiters.clear();
    },
  };
}
