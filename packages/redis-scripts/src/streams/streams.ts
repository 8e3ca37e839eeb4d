/**
 * The streaming extension of the Redis coordinator (core's `FlightStreamCoordinator`): one Redis stream per
 * run (`streamKey`, the flight's hash tag), appended by lua/streamAppend.lua under the owner's fence and
 * read by lua/streamRead.lua from the reader's last id. Readers wait on the flight's notice channel
 * (stream-watches.ts), so a wait that starts after an append it has not read ends at once, and a wait
 * after an id the notices' window holds gets the entries that follow it with the wake-up, without a read.
 */
import { FlightCoordinationError } from '@flight/core';
import {
  isActive,
  type Fence,
  type FlightRef,
  type FlightStreamCoordinator,
  type StreamEntry,
  type StreamWaitReply,
} from '@flight/core/adapter';
import type { RedisDriver } from '../driver';
import { streamKey, type FlightKeys } from '../keys';
import type { Notifications, Notice } from '../wake-up/notifications';
import { decodeMeta } from '../spine/reply';
import { runScript } from '../spine/scripts';
import { createStreamWatches, learnFromRead, streamIdAfter, type Watch } from './stream-watches';

/** Entries the read that follows a confirmed subscription returns with the wake-up. */
const READ_ON_SUBSCRIBE = 256;

export interface StreamsContext {
  driver: RedisDriver;
  prefix: string;
  notifications: Notifications;
  keysOf(ref: FlightRef): FlightKeys & { channel: string };
  /** Runs a Redis call with the coordinator's version check, deadline and error mapping. */
  call<T>(operation: string, ref: FlightRef, run: () => Promise<T>): Promise<T>;
  /** The most chunk bytes a progress notice carries (the coordinator's `inlineResultBytes`). */
  inlineBytes: number;
  nowArg(): string;
  fenceArgs(fence: Fence, keys: FlightKeys & { channel: string }): string[];
  ms(name: string, value: number): string;
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  throw new FlightCoordinationError(`unexpected stream reply element ${typeof value}`);
}

export function createRedisStreams(ctx: StreamsContext): FlightStreamCoordinator {
  const { driver, prefix, notifications, keysOf, call, nowArg, fenceArgs, ms, inlineBytes } = ctx;
  const watches = createStreamWatches(notifications);

  const keysFor = (ref: FlightRef, epoch: number) => {
    const keys = keysOf(ref);
    return { keys, list: [keys.meta, streamKey(prefix, keys.tag, epoch)] };
  };

  async function read(ref: FlightRef, epoch: number, afterId: string, count: number, watch: boolean) {
    const { list } = keysFor(ref, epoch);
    const raw = await call('streamRead', ref, () =>
      runScript(driver, 'streamRead', list, [nowArg(), afterId, String(count), watch ? '1' : '0']),
    );
    const [, record, flat] = raw as [unknown, unknown, unknown[]];
    const entries: StreamEntry[] = [];
    if (Array.isArray(flat)) for (let i = 0; i + 1 < flat.length; i += 2) entries.push({ id: text(flat[i]), chunk: text(flat[i + 1]) });
    return { entries, meta: decodeMeta(record, ref) };
  }

  return {
    async appendStream(fence, input) {
      if (input.chunks.length === 0) return { ok: true };
      const { keys, list } = keysFor(fence, fence.epoch);
      const args = [
        ...fenceArgs(fence, keys),
        ms('ttlMs', input.ttlMs),
        ms('maxChunks', input.maxChunks),
        ms('maxBytes', input.maxBytes),
        String(inlineBytes),
        input.from === undefined ? '' : String(input.from),
        ...input.chunks,
      ];
      const raw = (await call('streamAppend', fence, () => runScript(driver, 'streamAppend', list, args))) as unknown[];
      const code = text(raw[0]);
      if (code === 'OK') return { ok: true };
      return { ok: false, code: code === 'FORGOTTEN' || code === 'LIMIT' || code === 'POSITION' ? code : 'FENCED' };
    },

    readStream(ref, { epoch, afterId, count }) {
      return read(ref, epoch, afterId, count, false);
    },

    waitForStream(ref, { epoch, afterId, timeoutMs, signal }) {
      const { channel } = keysOf(ref);
      return new Promise<StreamWaitReply>((resolve) => {
        if (signal?.aborted) return resolve({ entries: [] });
        let done = false;
        const existing = watches.has(channel);
        const watch = watches.hold(channel);
        const finish = (entries: StreamEntry[] = []) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          signal?.removeEventListener('abort', stop);
          watch.waiters.delete(wake);
          watches.release(channel, watch);
          resolve({ entries });
        };
        const stop = () => finish();
        /** Something this waiter has not read: a newer run, an ended one, or an entry after its id. */
        const news = (w: Watch) => w.epoch > epoch || (w.epoch === epoch && (w.ended || streamIdAfter(w.lastId, afterId)));
        /** Ends the wait when there is news, with the entries after `afterId` that notices brought. */
        const settle = () => {
          if (!news(watch)) return;
          finish(watch.epoch === epoch && !watch.ended ? watch.recent.following(afterId) : []);
        };
        const check = () => {
          read(ref, epoch, afterId, READ_ON_SUBSCRIBE, true).then(
            ({ entries, meta }) => {
              const current = meta?.epoch === epoch && isActive(meta.status);
              if (current) learnFromRead(watch, epoch, afterId, entries);
              // A full read may have left entries unread: the reader reads on instead of taking these.
              if (entries.length > 0 || !current) finish(entries.length < READ_ON_SUBSCRIBE ? entries : []);
            },
            () => undefined, // the reader polls by its timeout
          );
        };
        const wake = (notice: Notice | undefined) => {
          if (notice === undefined) check();
          else settle();
        };
        const timer = setTimeout(stop, Math.max(0, timeoutMs));
        timer.unref?.();
        signal?.addEventListener('abort', stop, { once: true });
        watch.waiters.add(wake);
        // A channel listened to before this wait has missed nothing since (its news is checked here); a new
        // one is covered by `check` once its subscription is confirmed.
        if (existing) settle();
      });
    },
  };
}
