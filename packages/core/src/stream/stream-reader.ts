/**
 * Pulls a streamed flight's chunks from the coordinator into this node's `StreamLog`, for the callers of
 * a run owned by another node. One reader per log at a time, and only on demand: it reads while some
 * caller waits at the end of the log, so a slow caller is never pushed more than the log holds, and it
 * stops when nobody waits (it resumes from its last id). It follows a newer run (a takeover) by starting
 * that run's log from its first entry.
 */
import { isActive, type FlightRef } from '../state/types.js';
import type { Clock } from '../ports/clock.js';
import { sleep } from '../ports/clock.js';
import type { FlightLogger } from '../ports/logger.js';
import type { FlightStreamCoordinator } from '../ports/stream-coordinator.js';
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
  while (log.waiting > 0 && log.holders > 0 && !log.pushedLocally) {
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
      for (const entry of reply.entries) {
        run!.lastId = entry.id;
        try {
          log.push(run!, decodeChunk(entry.chunk));
        } catch (error) {
          logger.warn({ ...ref, epoch: run!.epoch, entry: entry.id, err: error }, 'skipped a stream entry that does not decode');
        }
      }
      continue;
    }
    // The remote run goes on: wait for its next entries. Otherwise (no run yet, this node's own run, a
    // run that ended) the call's outcome or a run it joins comes through the log.
    if (reading && active && meta.epoch === run!.epoch) {
      await coordinator.waitForStream(ref, { epoch: run!.epoch!, afterId: run!.lastId, timeoutMs: pollIntervalMs });
    } else await idle();
  }
}
