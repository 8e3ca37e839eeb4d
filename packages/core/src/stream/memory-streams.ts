/**
 * The streaming extension of the memory coordinator: one entry list per run (flight + epoch), written
 * under the same fence rules as `complete`, with a TTL, read from any id. Waiters wake on an append and
 * when the coordinator reports that the flight's record changed run or ended.
 */
import { flightId } from '../keys/key-builder.js';
import type { Clock } from '../ports/clock.js';
import type { FlightStreamCoordinator, StreamEntry } from '../ports/stream-coordinator.js';
import { fenceMatches, isForgotten } from '../state/transitions.js';
import { isActive, type FlightRecord, type FlightRef } from '../state/types.js';

interface RunStream {
  entries: string[];
  bytes: number;
  expireAt: number;
}

export interface MemoryStreamsDeps {
  clock: Clock;
  /** The live record of a flight (the memory coordinator's). */
  read(ref: FlightRef): FlightRecord | null;
}

export interface MemoryStreams extends FlightStreamCoordinator {
  /** Live run streams. */
  streams(): number;
  /** Wakes the flight's stream waiters: its record changed run (a takeover) or ended. */
  recordChanged(ref: FlightRef): void;
  /** Stream readers waiting for the flight's next entries. */
  readersOf(ref: FlightRef): number;
}

export function createMemoryStreams({ clock, read }: MemoryStreamsDeps): MemoryStreams {
  const streams = new Map<string, RunStream>();
  const waiters = new Map<string, Set<() => void>>();
  const streamId = (ref: FlightRef, epoch: number) => `${flightId(ref)}#${epoch}`;

  const live = (id: string): RunStream | undefined => {
    const stream = streams.get(id);
    if (stream && stream.expireAt <= clock.now()) {
      streams.delete(id);
      return undefined;
    }
    return stream;
  };
  const sweep = () => {
    for (const id of streams.keys()) live(id);
  };
  const wake = (ref: FlightRef) => {
    const set = waiters.get(flightId(ref));
    if (set) for (const resolve of [...set]) resolve();
  };

  return {
    readersOf: (ref) => waiters.get(flightId(ref))?.size ?? 0,
    appendStream(fence, input) {
      const record = read(fence);
      if (record && isForgotten(record.meta, fence.epoch)) return Promise.resolve({ ok: false, code: 'FORGOTTEN' });
      if (!record || !fenceMatches(record.meta, fence) || !isActive(record.meta.status))
        return Promise.resolve({ ok: false, code: 'FENCED' });
      const id = streamId(fence, fence.epoch);
      const stream = live(id) ?? { entries: [], bytes: 0, expireAt: 0 };
      if (input.from !== undefined && stream.entries.length !== input.from) return Promise.resolve({ ok: false, code: 'POSITION' });
      const bytes = input.chunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk, 'utf8'), stream.bytes);
      if (stream.entries.length + input.chunks.length > input.maxChunks || bytes > input.maxBytes) {
        return Promise.resolve({ ok: false, code: 'LIMIT' });
      }
      if (streams.size > 0 && !streams.has(id)) sweep();
      stream.entries.push(...input.chunks);
      stream.bytes = bytes;
      stream.expireAt = clock.now() + input.ttlMs;
      streams.set(id, stream);
      wake(fence);
      return Promise.resolve({ ok: true });
    },

    readStream(ref, { epoch, afterId, count }) {
      const entries: StreamEntry[] = [];
      const stream = live(streamId(ref, epoch));
      const from = afterId === '' ? 0 : Number(afterId);
      if (stream)
        for (let i = from; i < stream.entries.length && entries.length < count; i++)
          entries.push({ id: String(i + 1), chunk: stream.entries[i]! });
      const meta = read(ref)?.meta;
      return Promise.resolve({ entries, meta: meta ? { ...meta } : null });
    },

    waitForStream(ref, { epoch, afterId, timeoutMs, signal }) {
      const stream = live(streamId(ref, epoch));
      if ((stream && stream.entries.length > (afterId === '' ? 0 : Number(afterId))) || signal?.aborted)
        return Promise.resolve({ entries: [] });
      const id = flightId(ref);
      return new Promise((resolve) => {
        let set = waiters.get(id);
        if (!set) waiters.set(id, (set = new Set()));
        const done = () => {
          clock.clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          set.delete(done);
          if (set.size === 0 && waiters.get(id) === set) waiters.delete(id);
          resolve({ entries: [] });
        };
        const timer = clock.setTimeout(done, timeoutMs);
        signal?.addEventListener('abort', done, { once: true });
        set.add(done);
      });
    },

    streams() {
      sweep();
      return streams.size;
    },

    recordChanged: wake,
  };
}
