/**
 * The flights this process waits on for stream entries: while a flight has stream waiters, its channel is
 * listened to and the newest progress notice (epoch, last entry id, the entries small appends carry) is
 * kept; the listening lingers a moment after the last wait, so a reader's read-then-wait loses no notice.
 */
import { isActive, type StreamEntry } from '@flight/core/adapter';
import type { Notice, Notifications } from '../wake-up/notifications';
import { parseProgress, RecentEntries } from './stream-notice';

/** How long a flight's channel stays listened to after its last stream wait ended. */
const LINGER_MS = 2000;

/** Stream ids `ms-seq`: true when `a` comes after `b` ('' comes before every id). */
export function streamIdAfter(a: string, b: string): boolean {
  if (b === '') return a !== '';
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am > bm || (am === bm && as > bs);
}

export interface Watch {
  stop: () => void;
  /** The newest run and entry id a notice announced. */
  epoch: number;
  lastId: string;
  /** A terminal notice came for `epoch`. */
  ended: boolean;
  /** The entries of `epoch` that notices carried. */
  recent: RecentEntries;
  waiters: Set<(notice: Notice | undefined) => void>;
  linger: ReturnType<typeof setTimeout> | undefined;
}

/** Moves the watch on to run `epoch` when it is newer: nothing it knew of the run before holds for it. */
function startRun(watch: Watch, epoch: number): void {
  if (epoch <= watch.epoch) return;
  watch.epoch = epoch;
  watch.lastId = '';
  watch.ended = false;
  watch.recent.clear();
}

/**
 * What a read after a confirmed subscription found (`entries`, contiguous right after `afterId`, of run
 * `epoch`) teaches the watch: notices published before the subscription took effect were missed, so without
 * this a later wait after an id the read returned would see no news and wait for the next append.
 */
export function learnFromRead(watch: Watch, epoch: number, afterId: string, entries: readonly StreamEntry[]): void {
  const last = entries[entries.length - 1];
  if (!last || epoch < watch.epoch) return;
  startRun(watch, epoch);
  if (watch.ended || !streamIdAfter(last.id, watch.lastId)) return;
  watch.lastId = last.id;
  watch.recent.add(afterId, entries);
}

export interface StreamWatches {
  /** Whether `channel` is listened to already (it has missed nothing since). */
  has(channel: string): boolean;
  /** The watch of `channel`, listened to from now on until released. */
  hold(channel: string): Watch;
  /** Lets the watch of `channel` go once it has no waiter left (after `LINGER_MS`). */
  release(channel: string, watch: Watch): void;
}

export function createStreamWatches(notifications: Pick<Notifications, 'listen'>): StreamWatches {
  const watches = new Map<string, Watch>();

  function hold(channel: string): Watch {
    const watch = watches.get(channel);
    if (watch) {
      if (watch.linger) clearTimeout(watch.linger);
      watch.linger = undefined;
      return watch;
    }
    const created: Watch = {
      stop: () => undefined,
      epoch: 0,
      lastId: '',
      ended: false,
      recent: new RecentEntries(),
      waiters: new Set(),
      linger: undefined,
    };
    watches.set(channel, created);
    created.stop = notifications.listen(
      channel,
      (notice) => {
        startRun(created, notice.epoch);
        if (notice.epoch === created.epoch) {
          if (isActive(notice.status)) {
            const progress = notice.result === undefined ? undefined : parseProgress(notice.result);
            if (progress && streamIdAfter(progress.lastId, created.lastId)) created.lastId = progress.lastId;
            if (progress?.entries) created.recent.add(progress.before ?? '', progress.entries);
          } else created.ended = true;
        }
        for (const wake of [...created.waiters]) wake(notice);
      },
      () => {
        for (const wake of [...created.waiters]) wake(undefined);
      },
    );
    return created;
  }

  function release(channel: string, watch: Watch): void {
    if (watch.waiters.size > 0 || watch.linger) return;
    watch.linger = setTimeout(() => {
      watch.linger = undefined;
      if (watch.waiters.size > 0 || watches.get(channel) !== watch) return;
      watches.delete(channel);
      watch.stop();
    }, LINGER_MS);
    watch.linger.unref?.();
  }

  return { has: (channel) => watches.has(channel), hold, release };
}
