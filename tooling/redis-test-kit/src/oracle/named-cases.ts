/**
 * Schedules that once broke the rules, kept by name and run by the oracle before its random ones: each
 * is the interleaving of a defect found where two features met (issue 44), checked by the same rules.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { OracleRecorder } from './oracle-run';

/** Past the fresh time (300 ms) of a value just stored, inside its revalidate window (400 ms more). */
const PAST_FRESH_MS = 350;

export const NAMED_CASES: Record<string, (recorder: OracleRecorder) => Promise<void>> = {
  /** A caller runs the refresh of a stale value itself; a forget on its node resolves meanwhile; the node's next caller. */
  async 'forget during a caller-run refresh'(recorder) {
    const d1 = recorder.node('d1');
    await recorder.call(d1, 'swr', 'named-1', {}, { ms: 0 });
    await sleep(PAST_FRESH_MS);
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    void recorder.call(d1, 'swr', 'named-1', { staleRefresh: 'caller' }, { ms: 500, started });
    await running;
    await recorder.forget(d1, 'swr', 'named-1');
    await recorder.call(d1, 'swr', 'named-1', {}, { ms: 0 });
  },

  /**
   * A hybrid node's run, forgotten on another node while Redis is healthy; later an outage: once the node
   * serves in-process (a first call found Redis unreachable), its next caller of the flight.
   */
  async 'hybrid serves a forgotten value in the next outage'(recorder) {
    const [h1, d2] = [recorder.node('h1'), recorder.node('d2')];
    await recorder.call(h1, 'long', 'named-2', {}, { ms: 0 });
    await recorder.forget(d2, 'long', 'named-2');
    await sleep(150); // the forget's notice has reached every node that listens
    void recorder.outage(h1, 2500);
    await recorder.call(h1, 'plain', 'named-2-probe', {}, { ms: 0 });
    await recorder.call(h1, 'long', 'named-2', {}, { ms: 0 });
  },

  /** A client of a local node reads two chunks and leaves; the flight is forgotten and runs again; the client resumes. */
  async 'resume after a local run was replaced'(recorder) {
    const l1 = recorder.node('l1');
    await recorder.stream(l1, l1, 'named-3', {
      chunks: 4,
      gapMs: 50,
      leaveAfter: 2,
      beforeResume: async () => {
        await recorder.forget(l1, 'streamed', 'named-3');
        void recorder.stream(l1, l1, 'named-3', { chunks: 4, gapMs: 50, leaveAfter: 4 });
        await sleep(75); // the new run is under way
      },
    });
  },
};
