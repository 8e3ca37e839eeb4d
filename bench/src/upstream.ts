/** The simulated upstream: counts each call (a shared Redis INCR, or a local counter), waits, returns a JSON result. */
import type { Redis } from 'ioredis';
import { makePayload, type Evaluation } from './payload.js';
import { sleep } from './stats.js';

const payloads = new Map<number, Evaluation>();

export function payloadOf(bytes: number): Evaluation {
  let p = payloads.get(bytes);
  if (!p) payloads.set(bytes, (p = makePayload(bytes)));
  return p;
}

export interface UpstreamSpec {
  delayMs: number;
  payloadBytes: number;
  /** Redis key incremented once per call (shared by every process), when a counter client is given. */
  counterKey?: string;
}

export interface Upstream {
  supplier: () => Promise<Evaluation>;
  /** Calls made by this process. */
  calls(): number;
}

export function makeUpstream(spec: UpstreamSpec, counter?: Redis, gate?: Promise<void>): Upstream {
  let calls = 0;
  const payload = payloadOf(spec.payloadBytes);
  return {
    calls: () => calls,
    supplier: async () => {
      calls++;
      if (counter && spec.counterKey) await counter.incr(spec.counterKey);
      if (gate) await gate;
      if (spec.delayMs > 0) await sleep(spec.delayMs);
      return payload;
    },
  };
}
