/**
 * The bounded chaos run: 3 node processes (chaos-worker.ts), a stream of requests over many keys — direct
 * calls, a slow HTTP route that runs past its guard timeout, idempotent POSTs (each key sent to every
 * node at once, as a client's retries), and HTTP/2 GETs of one path by two tenants (`:authority`) — and random faults — kill and restart a node, pause a node
 * (SIGSTOP/SIGCONT), cut a node off from Redis (its proxy swallows everything), restart Redis (empty),
 * pause Redis (CLIENT PAUSE) — for a fixed time, on a Redis of its own. Ends by itself and returns one
 * summary; `wrong` and `unhandled` must be 0. An idempotent POST run twice is wrong, unless the node of
 * its earlier run was killed, paused or cut off since that run started, or Redis was restarted (empty),
 * paused long enough to cost the run its lease, or failed over before the nodes heard of it (the old primary
 * granted the lease): those reruns are counted apart (`idempotentRerunsAfterOwnerLoss`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
// The servers module alone: the rest of the testing entry imports vitest, which this CLI does not run under.
import {
  rawCommand,
  replicaInSync,
  seeded,
  startRedisServer,
  startSentinelTopology,
  startTcpProxy,
  type RedisServer,
  type TcpProxy,
} from '@flight/test-servers';
import { pauseCostsLease } from './chaos-policy.js';
import { sleep } from './figures.js';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * How long before a forget a fault on the answering node (or Redis) excuses a stale answer after it: the
 * node's subscriber is PINGed every 500 ms with a 500 ms deadline (redis-scripts notifications.ts), and a
 * paused or cut node learns of its state only when it runs again.
 */
const FORGET_FAULT_MARGIN_MS = 1500;

/**
 * How long after a failover is seen as over (every Sentinel names the promoted primary) a run may still
 * have been granted its lease by the old one: from the promotion until a node hears of the switch, and the
 * line saying so on its way. Without strict acknowledgement such a lease is lost with the old primary, as
 * the library documents, and the next caller runs again.
 */
const FAILOVER_NEWS_MARGIN_MS = 250;

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
  /**
   * The server binary to start (see `startRedisServer`), e.g. a valkey-server >= 8.1, on which runs nobody
   * touched complete with `SET … IFEQ` instead of the script. @default 'redis-server'
   */
  serverBinary?: string;
  /**
   * Run on a Sentinel topology (a primary, a replica, three Sentinels) that the nodes reach through the
   * Sentinels, with failovers among the faults: a graceful `SENTINEL FAILOVER`, and the primary SIGKILLed (it
   * comes back as a replica once the replica is promoted). A node cannot be cut off from Redis there (it
   * finds the primary itself). The nodes mix the two clients there: n2 reaches the Sentinels through
   * node-redis (`createSentinel`), n1 and n3 through ioredis. @default false
   */
  sentinel?: boolean;
  log?: (line: string) => void;
}

export interface ChaosSummary {
  requests: number;
  answered: number;
  typedErrors: Record<string, number>;
  wrong: number;
  /** Each wrong answer: what kind of request, what was wrong, when, and the faults just before it. */
  wrongAnswers: { kind: string; detail: string; atMs: number; recentFaults: string[] }[];
  unhandled: number;
  /** Each unhandled rejection or exception a node reported. */
  unhandledErrors: string[];
  /** Requests in flight on a node when it was SIGKILLed (the node died; not a library answer). */
  lostWithKilledNode: number;
  /** Requests that got no answer at all within the drain deadline from a live node (must be 0). */
  unanswered: number;
  /** Requests by kind: direct `call`, `slow` HTTP route, idempotent `post`, HTTP/2 `h2`. */
  requestsByKind: Record<string, number>;
  /** Idempotent POSTs run again after the node of their earlier run was lost to a fault (see above). */
  idempotentRerunsAfterOwnerLoss: number;
  /** Forgets of direct calls' keys acknowledged by a node (L1 on in every node). */
  forgets: number;
  /**
   * Answers to calls sent after a forget resolved that came from a run started before it, on a node that a
   * fault cut off from hearing it (its node or Redis lost, paused or restarted around it): see `staleAfterForget`.
   */
  staleAfterForgetDuringFault: number;
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
  /** Its own way to Redis, which the `cut-node` fault blackholes (none on a Sentinel topology). */
  proxy: TcpProxy | undefined;
  /** When this node was last killed, paused or cut off from Redis. */
  lostAt: number;
}

export async function runChaos(options: ChaosOptions): Promise<ChaosSummary> {
  const log = options.log ?? (() => undefined);
  const random = seeded(options.seed);
  const started = Date.now();
  const topology = options.sentinel ? await startSentinelTopology({ downAfterMs: 2000 }) : undefined;
  const redis: RedisServer | undefined = topology ? undefined : await startRedisServer({ binary: options.serverBinary });
  log(
    topology
      ? `a Sentinel topology, primary on ${await topology.primaryPort()}`
      : `${options.serverBinary ?? 'redis-server'} at ${redis!.url}`,
  );
  const prefix = 'chaos';
  const summary: ChaosSummary = {
    requests: 0,
    answered: 0,
    typedErrors: {},
    wrong: 0,
    wrongAnswers: [],
    unhandled: 0,
    unhandledErrors: [],
    lostWithKilledNode: 0,
    unanswered: 0,
    requestsByKind: {},
    idempotentRerunsAfterOwnerLoss: 0,
    forgets: 0,
    staleAfterForgetDuringFault: 0,
    upstreamCalls: 0,
    distinctKeys: 0,
    faults: 0,
    faultsByKind: {},
    durationMs: 0,
  };
  /** The latest faults (kind, target, time), for the detail of a wrong answer. */
  const recentFaults: string[] = [];
  const wrongAnswer = (kind: string, detail: string) => {
    const atMs = Date.now() - started;
    summary.wrong++;
    summary.wrongAnswers.push({ kind, detail, atMs, recentFaults: recentFaults.slice(-3) });
    log(`WRONG (${kind}) at ${atMs} ms: ${detail}`);
  };
  const requestedKeys = new Set<string>();
  const upstreamKeys = new Map<string, number>();
  let seq = 0;
  /** When Redis was last restarted (empty), or failed over. */
  let redisLostAt = 0;
  /** When the last failover was seen as over (every Sentinel names the promoted primary). */
  let failoverOverAt = 0;
  /** Settles when the last failover fault is over (the next waits for it). */
  let failovers = Promise.resolve();
  /** The window of requests and faults is over: a fault still waiting for its turn does not happen. */
  let windowOver = false;
  /** The last run of each idempotent key: when it started and on which node. */
  const idempotentRuns = new Map<string, { at: number; node: string }>();
  const proxies = new Map<string, TcpProxy>();
  /** Each node's cuts from Redis (`to` unset while one lasts). */
  const cuts = new Map<string, { from: number; to?: number }[]>();
  /** The tenant (`:authority`) of each HTTP/2 request in flight, by id. */
  const tenantOf = new Map<number, string>();
  /** The kind of each request in flight, by id. */
  const kindOf = new Map<number, string>();
  /** When each request in flight was sent. */
  const sentAt = new Map<number, number>();
  /** The acknowledged forgets of each key: when sent, when acknowledged. */
  const forgetsOf = new Map<string, { sent: number; acked: number }[]>();
  /** Forgets in flight, by id: key and when sent. */
  const forgetting = new Map<number, { key: string; sent: number }>();
  /** When Redis was last paused (CLIENT PAUSE): a node then may hear a forget late. */
  let redisPausedAt = 0;
  /** Each Redis pause: when it began and how long it lasted. */
  const redisPauses: { at: number; ms: number }[] = [];
  /**
   * A call's answer after a forget: `value` is `v:<key>|<run start ms>|<run node>`. Wrong when the call was
   * sent after a forget of its key resolved and its run started before that forget was sent — unless a fault
   * may have kept the answering node from hearing it (its node or Redis lost or paused since shortly before
   * the forget, bounded by the subscriber's liveness check), or the call joined, on the run's own node, the
   * forgotten run before the owner learnt of the forget (documented: until its next heartbeat).
   */
  const staleAfterForget = (node: Node, key: string, sent: number, value: string, role: string | undefined): string | undefined => {
    const [, started, runNode] = value.split('|');
    const forget = (forgetsOf.get(key) ?? []).filter((f) => f.acked <= sent).at(-1);
    if (!forget || Number(started) >= forget.sent) return undefined;
    const faultSince = Math.max(node.lostAt, redisLostAt, redisPausedAt);
    // A node cut off from Redis at any time from just before the forget until this answer could not hear it
    // (a cut that began long before the forget and still lasts included): it runs in-process then.
    const cutAround = (cuts.get(node.name) ?? []).some(
      (cut) => cut.from <= sent && (cut.to ?? Infinity) >= forget.sent - FORGET_FAULT_MARGIN_MS,
    );
    if (faultSince >= forget.sent - FORGET_FAULT_MARGIN_MS || cutAround) {
      summary.staleAfterForgetDuringFault++;
      return undefined;
    }
    if (runNode === node.name && role === 'follower' && sent - forget.acked < FORGET_FAULT_MARGIN_MS) return undefined;
    return `${key} sent ${sent - forget.acked} ms after a forget resolved got a run started ${forget.sent - Number(started)} ms before it (role ${role}, run on ${runNode}) from ${node.name}`;
  };
  const nodesByName = new Map<string, Node>();

  /** A run of an idempotent POST began on `node` at `now` (by the node's clock, this machine's). */
  const idempotentRun = (node: Node, key: string, now: number) => {
    const earlier = idempotentRuns.get(key);
    idempotentRuns.set(key, { at: now, node: node.name });
    if (!earlier) return;
    // A run begun just after a failover was seen as over may hold a lease the old primary granted before the
    // nodes heard of the switch (FAILOVER_NEWS_MARGIN_MS); the forget judgement does not stretch that far.
    const lost = Math.max(nodesByName.get(earlier.node)?.lostAt ?? 0, redisLostAt, failoverOverAt + FAILOVER_NEWS_MARGIN_MS);
    // A run whose start is read while its node is cut off acquired its lease before the cut (an idempotent
    // request never runs without Redis, and nothing passes a cut): the node lost Redis during that run, even
    // though the line saying it started came in a few ms after the cut began.
    const cutDuringRun = (cuts.get(earlier.node) ?? []).some((cut) => earlier.at >= cut.from && earlier.at <= (cut.to ?? Infinity));
    // A Redis pause during the run that, with the time since the owner's last renewal, outlasts the takeover
    // time costs the owner its lease: it gives the run up and the next caller takes it over, by the lease rules.
    // A run whose start is read while Redis is paused acquired its lease before the pause (no command runs
    // during one): the line saying so came in after the pause began, but the pause fell in the run.
    const pausedDuringRun = redisPauses.some((p) => p.at <= now && p.at + p.ms >= earlier.at && pauseCostsLease(p.ms));
    if (lost >= earlier.at || cutDuringRun || pausedDuringRun) summary.idempotentRerunsAfterOwnerLoss++;
    else {
      wrongAnswer('post', `idempotent POST ${key} ran again on ${node.name} (earlier on ${earlier.node}, ${now - earlier.at} ms before)`);
    }
  };

  const startNode = async (name: string): Promise<Node> => {
    if (topology) return startWorker(name, undefined);
    let proxy = proxies.get(name);
    if (!proxy) proxies.set(name, (proxy = await startTcpProxy({ port: redis!.port })));
    proxy.mode = 'pass';
    return startWorker(name, proxy);
  };

  const startWorker = (name: string, proxy: TcpProxy | undefined): Promise<Node> =>
    new Promise((resolve, reject) => {
      const connection = proxy
        ? { url: proxy.url }
        : { sentinel: { name: topology!.name, sentinels: topology!.sentinels }, client: name === 'n2' ? 'node-redis' : 'ioredis' };
      const child = spawn(process.execPath, ['--conditions=@flight/source', '--import', 'tsx', join(here, 'chaos-worker.ts')], {
        env: { ...process.env, FLIGHT_CHAOS_NODE: JSON.stringify({ ...connection, nodeId: name, prefix }) },
        cwd: join(here, '..'),
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const node: Node = { name, child, alive: true, paused: false, pending: new Map(), proxy, lostAt: nodesByName.get(name)?.lostAt ?? 0 };
      nodesByName.set(name, node);
      child.stdin!.on('error', () => undefined);
      child.once('exit', () => {
        node.alive = false;
        summary.lostWithKilledNode += node.pending.size;
        node.pending.clear();
        reject(new Error(`${name} exited before ready`));
      });
      createInterface({ input: child.stdout! }).on('line', (line) => {
        let m: {
          event?: string;
          id?: number;
          ok?: boolean;
          value?: string;
          role?: string;
          code?: string;
          key?: string;
          error?: string;
          forgot?: boolean;
          at?: number;
        };
        try {
          m = JSON.parse(line);
        } catch {
          return;
        }
        if (m.event === 'ready') resolve(node);
        else if (m.event === 'idempotent-run') idempotentRun(node, m.key!, m.at ?? Date.now());
        else if (m.event === 'upstream') {
          summary.upstreamCalls++;
          upstreamKeys.set(m.key!, (upstreamKeys.get(m.key!) ?? 0) + 1);
        } else if (m.event === 'unhandled') {
          summary.unhandled++;
          summary.unhandledErrors.push(`${name}: ${m.error}`);
          log(`unhandled in ${name}: ${m.error}`);
        } else if (m.id !== undefined && forgetting.has(m.id)) {
          const f = forgetting.get(m.id)!;
          forgetting.delete(m.id);
          if (m.forgot) {
            summary.forgets++;
            forgetsOf.set(f.key, [...(forgetsOf.get(f.key) ?? []), { sent: f.sent, acked: Date.now() }]);
          }
        } else if (m.id !== undefined) {
          const key = node.pending.get(m.id);
          if (key === undefined) return;
          node.pending.delete(m.id);
          const kind = kindOf.get(m.id);
          const requestSentAt = sentAt.get(m.id) ?? 0;
          const tenant = tenantOf.get(m.id);
          kindOf.delete(m.id);
          sentAt.delete(m.id);
          tenantOf.delete(m.id);
          if (m.ok) {
            summary.answered++;
            const expected = kind === 'call' ? m.value?.startsWith(`v:${key}|`) : m.value === (tenant ? `v:${key}@${tenant}` : `v:${key}`);
            if (!expected)
              wrongAnswer(kind ?? 'call', `${key}${tenant ? ` for ${tenant}` : ''} answered ${JSON.stringify(m.value)} by ${name}`);
            else if (kind === 'call') {
              const stale = staleAfterForget(node, key, requestSentAt, m.value!, m.role);
              if (stale) wrongAnswer('forget', stale);
            }
          } else {
            summary.typedErrors[m.code!] = (summary.typedErrors[m.code!] ?? 0) + 1;
            if (m.code!.startsWith('untyped')) log(`untyped error in ${name}: ${m.code}`);
          }
        }
      });
    });

  const nodes: Node[] = await Promise.all(['n1', 'n2', 'n3'].map(startNode));

  type Kind = 'call' | 'slow' | 'post' | 'h2';
  const request = (node: Node, key: string, kind: Kind, workMs: number, tenant?: string) => {
    const id = ++seq;
    summary.requests++;
    summary.requestsByKind[kind] = (summary.requestsByKind[kind] ?? 0) + 1;
    requestedKeys.add(`${kind}:${key}`);
    node.pending.set(id, key);
    kindOf.set(id, kind);
    sentAt.set(id, Date.now());
    if (tenant) tenantOf.set(id, tenant);
    node.child.stdin!.write(`${JSON.stringify({ op: 'request', id, key, workMs, kind, tenant })}\n`);
  };

  let posts = 0;
  /** One tick's request: mostly direct calls, some slow-route GETs, and now and then an idempotent POST sent to every live node at once. */
  const requestSome = (live: Node[]) => {
    const pick = random();
    const workMs = 30 + Math.floor(random() * 250);
    if (pick < 0.04) {
      // A fresh Idempotency-Key each time: one client's POST, retried against every node.
      const key = `p${++posts}`;
      for (const node of live) request(node, key, 'post', workMs);
      return;
    }
    const key = `k${Math.floor(random() * options.keys)}`;
    if (pick > 0.97) {
      // A forget of a direct call's key, on any node, while the others read it (from L1 too).
      const id = ++seq;
      forgetting.set(id, { key, sent: Date.now() });
      live[Math.floor(random() * live.length)]!.child.stdin!.write(`${JSON.stringify({ op: 'forget', id, key })}\n`);
      return;
    }
    // Over HTTP/2, two tenants (`:authority`) ask for the same paths: each must get its own answer.
    if (pick >= 0.2 && pick < 0.3)
      return request(live[Math.floor(random() * live.length)]!, key, 'h2', workMs, `t${Math.floor(random() * 2)}.example`);
    request(live[Math.floor(random() * live.length)]!, key, pick < 0.2 ? 'slow' : 'call', workMs);
  };

  const faultKinds = topology
    ? (['kill-node', 'pause-node', 'failover', 'kill-primary', 'pause-redis'] as const)
    : (['kill-node', 'pause-node', 'cut-node', 'restart-redis', 'pause-redis'] as const);
  const faultTasks: Promise<void>[] = [];
  const faultOffset = Math.floor(random() * faultKinds.length);
  const injectFault = async () => {
    // Round-robin from a random start, so every kind of fault happens in every run.
    const kind = faultKinds[(summary.faults + faultOffset) % faultKinds.length]!;
    summary.faults++;
    summary.faultsByKind[kind] = (summary.faultsByKind[kind] ?? 0) + 1;
    /** A fault that could not happen now (its node down or paused, a failover under way): counted apart. */
    const skipped = () => {
      summary.faultsByKind[kind]! -= 1;
      summary.faultsByKind[`${kind} skipped`] = (summary.faultsByKind[`${kind} skipped`] ?? 0) + 1;
    };
    // A node fault hits a random node that can take it now (up, not paused, not cut off already).
    const usable = (n: Node) => n.alive && !n.paused && (kind !== 'cut-node' || n.proxy?.mode === 'pass');
    let index = Math.floor(random() * nodes.length);
    for (let i = 0; i < nodes.length && !usable(nodes[index]!); i++) index = (index + 1) % nodes.length;
    const node = nodes[index]!;
    const fault = `${kind}${kind.endsWith('node') ? ` ${node.name}` : ''} at ${Date.now() - started} ms`;
    recentFaults.push(fault);
    log(`fault ${fault}`);
    switch (kind) {
      case 'kill-node': {
        if (!node.alive || node.paused) return skipped();
        node.alive = false;
        node.lostAt = Date.now();
        node.child.kill('SIGKILL');
        await sleep(800);
        nodes[index] = await startNode(node.name);
        return;
      }
      case 'pause-node': {
        if (!node.alive || node.paused) return skipped();
        node.paused = true;
        node.lostAt = Date.now();
        process.kill(node.child.pid!, 'SIGSTOP');
        await sleep(2000 + Math.floor(random() * 1000));
        process.kill(node.child.pid!, 'SIGCONT');
        // Its runs and its L1 copies went unheard for the pause: counted as lost until it runs again.
        node.lostAt = Date.now();
        node.paused = false;
        return;
      }
      case 'cut-node': {
        // The node stays up and keeps taking requests; every byte to and from Redis is swallowed.
        if (!node.alive || !node.proxy || node.proxy.mode !== 'pass') return skipped();
        node.lostAt = Date.now();
        const cut: { from: number; to?: number } = { from: node.lostAt };
        cuts.set(node.name, [...(cuts.get(node.name) ?? []), cut]);
        node.proxy.mode = 'blackhole';
        await sleep(2000 + Math.floor(random() * 1000));
        node.lostAt = Date.now();
        cut.to = node.lostAt;
        node.proxy.mode = 'pass';
        node.proxy.resetAll();
        return;
      }
      case 'restart-redis':
        redisLostAt = Date.now();
        await redis!.restart();
        redisLostAt = Date.now();
        return;
      case 'failover':
      case 'kill-primary': {
        // Writes the primary acknowledged but its replica had not received yet may be lost, as in a restart.
        // One failover at a time: the next waits until the last is over and its old primary is back as a
        // replica in sync (the Sentinels convert it after a graceful failover, up to 10 s later), so no
        // failover meets a topology that has no replica to promote yet.
        const previous = failovers;
        let done!: () => void;
        failovers = new Promise<void>((resolve) => (done = resolve));
        try {
          await previous;
          if (windowOver) return skipped();
          recentFaults.push(`${kind} starts at ${Date.now() - started} ms`);
          redisLostAt = Date.now();
          const old = await topology!.primaryPort();
          await (kind === 'failover' ? topology!.failover() : topology!.killPrimary());
          redisLostAt = Date.now();
          failoverOverAt = redisLostAt;
          recentFaults.push(`${kind} promoted at ${Date.now() - started} ms`);
          await (kind === 'kill-primary' ? topology!.revive(old) : replicaInSync(old));
        } finally {
          done();
        }
        return;
      }
      case 'pause-redis': {
        const ms = 1000 + Math.floor(random() * 1000);
        const port = topology ? await topology.primaryPort() : redis!.port;
        redisPauses.push({ at: Date.now(), ms });
        redisPausedAt = Date.now() + 2000;
        await rawCommand(port, ['CLIENT', 'PAUSE', String(ms), 'ALL']).catch(() => '');
        return;
      }
    }
  };

  try {
    let nextFault = Date.now() + options.faultEveryMs;
    // The window of faults and requests starts once the nodes are ready (starting them is not part of it).
    const window = Date.now();
    while (Date.now() - window < options.durationMs) {
      for (let i = 0; i < options.perTick; i++) {
        const live = nodes.filter((n) => n.alive && !n.paused);
        if (live.length === 0) break;
        requestSome(live);
      }
      if (Date.now() >= nextFault) {
        nextFault = Date.now() + options.faultEveryMs;
        faultTasks.push(injectFault().catch((error) => log(`fault failed: ${String(error)}`)));
      }
      await sleep(options.tickMs);
    }
    windowOver = true;
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
    await Promise.all([...proxies.values()].map((proxy) => proxy.close()));
    await redis?.stop();
    await topology?.stop();
  }
  summary.distinctKeys = requestedKeys.size;
  summary.durationMs = Date.now() - started;
  return summary;
}

/** Each wrong answer and unhandled error, a line each (none when the run was clean). */
export function formatProblems(s: ChaosSummary): string[] {
  return [
    ...s.wrongAnswers.map(
      (w) => `chaos WRONG kind=${w.kind} at=${w.atMs}ms ${w.detail} (recent faults: ${w.recentFaults.join('; ') || 'none'})`,
    ),
    ...s.unhandledErrors.map((e) => `chaos UNHANDLED ${e}`),
  ];
}

/** The one summary line. */
export function formatSummary(s: ChaosSummary): string {
  const errors = Object.entries(s.typedErrors)
    .map(([code, n]) => `${code}:${n}`)
    .join(',');
  const faults = Object.entries(s.faultsByKind)
    .map(([kind, n]) => `${kind}:${n}`)
    .join(',');
  const kinds = Object.entries(s.requestsByKind)
    .map(([kind, n]) => `${kind}:${n}`)
    .join(',');
  return (
    `chaos requests=${s.requests} {${kinds}} answered=${s.answered} typedErrors={${errors}} wrong=${s.wrong} unhandled=${s.unhandled} ` +
    `unanswered=${s.unanswered} lostWithKilledNode=${s.lostWithKilledNode} idempotentRerunsAfterOwnerLoss=${s.idempotentRerunsAfterOwnerLoss} ` +
    `forgets=${s.forgets} staleAfterForgetDuringFault=${s.staleAfterForgetDuringFault} upstreamCalls=${s.upstreamCalls} ` +
    `distinctKeys+faults=${s.distinctKeys}+${s.faults} faults={${faults}} durationMs=${s.durationMs}`
  );
}
