/**
 * The bounded chaos run: 3 node processes (chaos-worker.ts), a stream of requests over many keys, and
 * random faults — kill and restart a node, pause a node (SIGSTOP/SIGCONT), restart Redis (empty),
 * pause Redis (CLIENT PAUSE) — for a fixed time, on a Redis of its own. Ends by itself and returns one
 * summary; `wrong` and `unhandled` must be 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
// The servers module alone: the rest of the testing entry imports vitest, which this CLI does not run under.
import { startRedisServer, type RedisServer } from '@flight/redis-scripts/servers';
import { sleep } from './figures.js';

const here = dirname(fileURLToPath(import.meta.url));

export interface ChaosOptions {
  /** How long faults and requests run. */
  durationMs: number;
  /** Time between two faults. */
  faultEveryMs: number;
  /** Distinct keys requested. */
  keys: number;
  /** Requests sent per tick (each to a random live node). */
  perTick: number;
  tickMs: number;
  seed: number;
  log?: (line: string) => void;
}

export interface ChaosSummary {
  requests: number;
  answered: number;
  typedErrors: Record<string, number>;
  wrong: number;
  unhandled: number;
  /** Requests in flight on a node when it was SIGKILLed (the node died; not a library answer). */
  lostWithKilledNode: number;
  /** Requests that got no answer at all within the drain deadline from a live node (must be 0). */
  unanswered: number;
  upstreamCalls: number;
  distinctKeys: number;
  faults: number;
  faultsByKind: Record<string, number>;
  durationMs: number;
}

interface Node {
  name: string;
  child: ChildProcess;
  alive: boolean;
  paused: boolean;
  pending: Map<number, string>;
}

/** Mulberry32: a small seeded PRNG, so a run can be repeated with --seed. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function runChaos(options: ChaosOptions): Promise<ChaosSummary> {
  const log = options.log ?? (() => undefined);
  const random = prng(options.seed);
  const started = Date.now();
  const redis: RedisServer = await startRedisServer();
  const prefix = 'chaos';
  const summary: ChaosSummary = {
    requests: 0,
    answered: 0,
    typedErrors: {},
    wrong: 0,
    unhandled: 0,
    lostWithKilledNode: 0,
    unanswered: 0,
    upstreamCalls: 0,
    distinctKeys: 0,
    faults: 0,
    faultsByKind: {},
    durationMs: 0,
  };
  const requestedKeys = new Set<string>();
  const upstreamKeys = new Map<string, number>();
  let seq = 0;

  const startNode = (name: string): Promise<Node> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'chaos-worker.ts')], {
        env: { ...process.env, TSX_TSCONFIG_PATH: join(here, '..', 'tsconfig.json'), FLIGHT_CHAOS_NODE: JSON.stringify({ url: redis.url, nodeId: name, prefix }) },
        cwd: join(here, '..'),
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const node: Node = { name, child, alive: true, paused: false, pending: new Map() };
      child.stdin!.on('error', () => undefined);
      child.once('exit', () => {
        node.alive = false;
        summary.lostWithKilledNode += node.pending.size;
        node.pending.clear();
        reject(new Error(`${name} exited before ready`));
      });
      createInterface({ input: child.stdout! }).on('line', (line) => {
        let m: { event?: string; id?: number; ok?: boolean; value?: string; code?: string; key?: string; error?: string };
        try {
          m = JSON.parse(line);
        } catch {
          return;
        }
        if (m.event === 'ready') resolve(node);
        else if (m.event === 'upstream') {
          summary.upstreamCalls++;
          upstreamKeys.set(m.key!, (upstreamKeys.get(m.key!) ?? 0) + 1);
        } else if (m.event === 'unhandled') {
          summary.unhandled++;
          log(`unhandled in ${name}: ${m.error}`);
        } else if (m.id !== undefined) {
          const key = node.pending.get(m.id);
          if (key === undefined) return;
          node.pending.delete(m.id);
          if (m.ok) {
            summary.answered++;
            if (m.value !== `v:${key}`) {
              summary.wrong++;
              log(`WRONG for ${key}: ${m.value}`);
            }
          } else {
            summary.typedErrors[m.code!] = (summary.typedErrors[m.code!] ?? 0) + 1;
            if (m.code!.startsWith('untyped')) log(`untyped error in ${name}: ${m.code}`);
          }
        }
      });
    });

  const nodes: Node[] = await Promise.all(['n1', 'n2', 'n3'].map(startNode));

  const request = (node: Node, key: string) => {
    const id = ++seq;
    summary.requests++;
    requestedKeys.add(key);
    node.pending.set(id, key);
    node.child.stdin!.write(`${JSON.stringify({ op: 'request', id, key, workMs: 30 + Math.floor(random() * 250) })}\n`);
  };

  const faultKinds = ['kill-node', 'pause-node', 'restart-redis', 'pause-redis'] as const;
  const faultTasks: Promise<void>[] = [];
  const faultOffset = Math.floor(random() * faultKinds.length);
  const injectFault = async () => {
    // Round-robin from a random start, so every kind of fault happens in every run.
    const kind = faultKinds[(summary.faults + faultOffset) % faultKinds.length]!;
    summary.faults++;
    summary.faultsByKind[kind] = (summary.faultsByKind[kind] ?? 0) + 1;
    const index = Math.floor(random() * nodes.length);
    const node = nodes[index]!;
    log(`fault ${kind}${kind.endsWith('node') ? ` ${node.name}` : ''} at ${Date.now() - started} ms`);
    switch (kind) {
      case 'kill-node': {
        if (!node.alive || node.paused) return;
        node.alive = false;
        node.child.kill('SIGKILL');
        await sleep(800);
        nodes[index] = await startNode(node.name);
        return;
      }
      case 'pause-node': {
        if (!node.alive || node.paused) return;
        node.paused = true;
        process.kill(node.child.pid!, 'SIGSTOP');
        await sleep(2000 + Math.floor(random() * 1000));
        process.kill(node.child.pid!, 'SIGCONT');
        node.paused = false;
        return;
      }
      case 'restart-redis':
        await redis.restart();
        return;
      case 'pause-redis':
        await redis.command('CLIENT', 'PAUSE', String(1000 + Math.floor(random() * 1000)), 'ALL').catch(() => '');
        return;
    }
  };

  try {
    let nextFault = Date.now() + options.faultEveryMs;
    while (Date.now() - started < options.durationMs) {
      for (let i = 0; i < options.perTick; i++) {
        const live = nodes.filter((n) => n.alive && !n.paused);
        if (live.length === 0) break;
        const key = `k${Math.floor(random() * options.keys)}`;
        request(live[Math.floor(random() * live.length)]!, key);
      }
      if (Date.now() >= nextFault) {
        nextFault = Date.now() + options.faultEveryMs;
        faultTasks.push(injectFault().catch((error) => log(`fault failed: ${String(error)}`)));
      }
      await sleep(options.tickMs);
    }
    await Promise.all(faultTasks);
    // Drain: every live node answers its pending requests (wait timeout 8 s + margin).
    const drainUntil = Date.now() + 20_000;
    while (nodes.some((n) => n.alive && n.pending.size > 0) && Date.now() < drainUntil) await sleep(50);
    summary.unanswered = nodes.reduce((sum, n) => sum + (n.alive ? n.pending.size : 0), 0);
  } finally {
    await Promise.all(
      nodes.map(async (node) => {
        if (!node.alive) return;
        const exited = new Promise((resolve) => node.child.once('exit', resolve));
        node.child.stdin!.write(`${JSON.stringify({ op: 'exit' })}\n`);
        const timer = setTimeout(() => node.child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }),
    );
    await redis.stop();
  }
  summary.distinctKeys = requestedKeys.size;
  summary.durationMs = Date.now() - started;
  return summary;
}

/** The one summary line. */
export function formatSummary(s: ChaosSummary): string {
  const errors = Object.entries(s.typedErrors)
    .map(([code, n]) => `${code}:${n}`)
    .join(',');
  const faults = Object.entries(s.faultsByKind)
    .map(([kind, n]) => `${kind}:${n}`)
    .join(',');
  return (
    `chaos requests=${s.requests} answered=${s.answered} typedErrors={${errors}} wrong=${s.wrong} unhandled=${s.unhandled} ` +
    `unanswered=${s.unanswered} lostWithKilledNode=${s.lostWithKilledNode} upstreamCalls=${s.upstreamCalls} ` +
    `distinctKeys+faults=${s.distinctKeys}+${s.faults} faults={${faults}} durationMs=${s.durationMs}`
  );
}
