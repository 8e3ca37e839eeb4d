/**
 * Pulls a streamed flight's chunks from the coordinator into this node's `StreamLog`, for the callers of
 * a run owned by another node. One reader per log at a time, started on demand (a caller waits at the end
 * of the log). Entries a wake-up brings (see `StreamWaitReply`) go to the log without a read, and the
 * reader waits again at once, whether or not a caller waits at that moment: the callers are usually busy
 * with the entries just brought, and a reader that stopped then would start over with a read per batch on
 * every following node. It stops when a wait brings nothing and nobody waits, or nobody holds the log (it
 * resumes from its last id). It follows a newer run (a takeover) by starting that run's log from its first
 * entry.
 */
import { isActive, type FlightRef } from '../state/types.js';
import type { Clock } from '../ports/clock.js';
import { sleep } from '../ports/clock.js';
import type { FlightLogger } from '../ports/logger.js';
import type { FlightStreamCoordinator, StreamEntry } from '../ports/stream-coordinator.js';
import { decodeChunk } from './chunk-codec.js';
import type { StreamLog, StreamRun } from './stream-log.js';

/** Entries read per call. */
const READ_BATCH = 256;

export interface ReaderSpec {
  coordinator: FlightStreamCoordinator;
  ref: FlightRef;
  log: StreamLog;
  clock: Clock;
  logger: FlightLogger;
  /** Longest wait for a notice before reading again (the stage's `pollIntervalMs`). */
  pollIntervalMs: number;
}

/** Starts the reader of `spec.log` unless one runs; it ends by itself when nobody waits. */
export function demandChunks(spec: ReaderSpec, running: WeakSet<StreamLog>): void {
  const { log } = spec;
  if (running.has(log) || log.pushedLocally) return;
  running.add(log);
  read(spec).then(
    () => running.delete(log),
    (error: unknown) => {
      running.delete(log);
      spec.logger.warn({ ...spec.ref, err: error }, 'stream reader stopped');
    },
  );
}

async function read(spec: ReaderSpec): Promise<void> {
  const { coordinator, ref, log, clock, logger, pollIntervalMs } = spec;
  /** Nothing to read: wait for a change of the log (this node's run, a run joined, the outcome) or the next poll. */
  const idle = () => Promise.race([sleep(clock, pollIntervalMs), log.changed()]);
  /** The remote run being read (undefined until the flight's current run is known). */
  let run: StreamRun | undefined = log.run && !log.run.local ? log.run : undefined;
  const take = (into: StreamRun, entries: readonly StreamEntry[]) => {
    for (const entry of entries) {
      into.lastId = entry.id;
      try {
        log.push(into, decodeChunk(entry.chunk));
      } catch (error) {
        logger.warn({ ...ref, epoch: into.epoch, entry: entry.id, err: error }, 'skipped a stream entry that does not decode');
      }
    }
  };
  /** Waits for the next entries of `into`; true when the wake-up brought them (they are in the log). */
  const next = async (into: StreamRun): Promise<boolean> => {
    const { entries } = await coordinator.waitForStream(ref, { epoch: into.epoch!, afterId: into.lastId, timeoutMs: pollIntervalMs });
    if (entries.length === 0 || log.run !== into || log.pushedLocally) return false;
    take(into, entries);
    return true;
  };
  /** The last wait brought entries: the run is known to go on, so wait again before reading. */
  let brought = false;
  while ((log.waiting > 0 || brought) && log.holders > 0 && !log.pushedLocally) {
    if (brought && run && log.run === run) {
      brought = await next(run);
      continue;
    }
    brought = false;
    // This node's own run, still current, was pushed whole: only the flight's outcome (or a newer run) can follow.
    const ownRun = log.run?.local === true ? log.run : undefined;
    const epoch = run?.epoch ?? ownRun?.epoch ?? 0;
    let reply;
    try {
      reply = await coordinator.readStream(ref, { epoch, afterId: run?.lastId ?? '', count: READ_BATCH });
    } catch (error) {
      logger.warn({ ...ref, err: error }, 'reading the stream failed; trying again');
      await idle();
      continue;
    }
    if (log.pushedLocally) return;
    const { meta } = reply;
    const active = meta !== null && isActive(meta.status);
    if (active && meta.epoch > epoch) {
      // A newer run: its chunks start over.
      run = log.begin(meta.epoch, false);
      continue;
    }
    const reading = run !== undefined && log.run === run;
    if (reading && reply.entries.length > 0) {
      take(run!, reply.entries);
      // A full batch: more may be stored already. Otherwise the read reached the end: wait.
      if (reply.entries.length === READ_BATCH || !active || meta.epoch !== run!.epoch) continue;
    }
    // The remote run goes on: wait for its next entries. Otherwise (no run yet, this node's own run, a
    // run that ended) the call's outcome or a run it joins comes through the log.
    if (reading && active && meta.epoch === run!.epoch) brought = await next(run!);
    else await idle();
  }
}
