/**
 * `pnpm demo`: the fake model and 3 nodes sharing Redis, their URLs, a short scripted load that
 * prints requests vs. model calls, then everything stops (`--keep` leaves it running).
 *
 * Options: --keep, --nodes <n> (default 3), --requests <n> (default 300).
 * Env: REDIS_URL (default redis://127.0.0.1:6379), MODEL_LATENCY_MS (default 800), MODEL_TOKENS_PER_SEC (default 40), FLIGHT_MODE.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { APP_DIR, redisAnswers, startModelProcess, startNodeProcesses, type Proc } from './cluster.js';
import { burst, countBy, modelStats, streamBurst } from './load.js';

const { values: args } = parseArgs({
  // `pnpm demo -- --nodes 2` passes the `--` through.
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    keep: { type: 'boolean', default: false },
    nodes: { type: 'string', default: '3' },
    requests: { type: 'string', default: '300' },
  },
});

const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const mode = (process.env.FLIGHT_MODE ?? 'hybrid') as 'hybrid';
const requests = Math.max(1, Number(args.requests));
const tokensPerSecond = Number(process.env.MODEL_TOKENS_PER_SEC ?? 40);
const logDir = join(APP_DIR, '.tmp', 'demo-logs');
const procs: Proc[] = [];

const line = (s = '') => process.stdout.write(`${s}\n`);
const pad = (s: unknown, n: number) => String(s).padEnd(n);
/** Nearest-rank percentile. */
const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
};

async function main() {
  line('flight · interview demo');
  line('');
  let nodeCount = Math.max(1, Number(args.nodes));
  let coordination = redisUrl;
  if (!(await redisAnswers(redisUrl))) {
    line(`! No Redis answers at ${redisUrl}: starting ONE node on the in-memory coordinator.`);
    line(`  It deduplicates its own callers only. Start Redis (or set REDIS_URL) for the 3-node cluster.`);
    nodeCount = 1;
    coordination = 'memory';
  } else {
    line(`Redis: ${redisUrl} (mode ${mode})`);
  }

  const model = await startModelProcess({
    latencyMs: Number(process.env.MODEL_LATENCY_MS ?? 800),
    tokensPerSecond,
    logFile: join(logDir, 'model.log'),
  });
  procs.push(model);
  const nodes = await startNodeProcesses(nodeCount, (i) => ({
    nodeId: `node-${i + 1}`,
    redisUrl: coordination,
    modelBaseUrl: model.baseUrl,
    mode,
    logFile: join(logDir, `node-${i + 1}.log`),
  }));
  procs.push(...nodes);
  line(`fake model   ${model.baseUrl}   (GET ${model.url}/stats counts the calls it received)`);
  for (const node of nodes)
    line(`${pad(node.name, 12)} ${node.url}   demo page ${node.url}/   dashboard ${node.url}/flight/   metrics ${node.url}/metrics`);
  line(`logs         ${logDir}`);
  line('');

  const run = Date.now().toString(36);
  const urls = nodes.map((n) => n.url);
  const scenarios = [
    {
      stage: 'interview-evaluation',
      path: `/api/sessions/demo-${run}/evaluation`,
      body: { questionNumber: 1, question: 'What is single-flight?', answer: 'One caller runs the work, the others share its result.' },
      n: requests,
    },
    {
      stage: 'interview-followup',
      path: `/api/sessions/demo-${run}/follow-up`,
      body: { currentQuestion: 'q1', answer: 'One caller runs the work, the others share its result.' },
      n: requests,
    },
    {
      stage: 'interview-extraction',
      path: `/api/sessions/demo-${run}/extraction`,
      body: { fileUrl: `https://files.example/resume-${run}.pdf` },
      n: Math.min(requests, 60),
    },
    {
      stage: 'interview-demeanor',
      path: `/api/sessions/demo-${run}/demeanor`,
      body: { imageUrl: `https://files.example/frame-${run}-0001.jpg` },
      n: Math.min(requests, 60),
    },
  ];
  line(`Scripted load: for each stage, N identical requests at once, spread over ${nodes.length} node(s).`);
  line('');
  line(`${pad('stage', 22)}${pad('requests', 10)}${pad('answered', 10)}${pad('same', 6)}${pad('model calls', 13)}${pad('time', 9)}roles`);
  let totalRequests = 0;
  let totalCalls = 0;
  for (const s of scenarios) {
    const before = await modelStats(model.url);
    const started = Date.now();
    const responses = await burst(urls, s.path, s.body, s.n);
    const took = Date.now() - started;
    const after = await modelStats(model.url);
    const calls = (after.byStage[s.stage] ?? 0) - (before.byStage[s.stage] ?? 0);
    const ok = responses.filter((r) => r.status === 200);
    const same = new Set(ok.map((r) => JSON.stringify(r.body.result))).size === 1 && ok.length > 0;
    const roles = countBy(ok, (r) => r.role ?? '?');
    totalRequests += s.n;
    totalCalls += calls;
    line(
      `${pad(s.stage, 22)}${pad(s.n, 10)}${pad(ok.length, 10)}${pad(same ? 'yes' : 'NO', 6)}${pad(calls, 13)}${pad(`${took} ms`, 9)}${Object.entries(
        roles,
      )
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
  }
  line('');
  line(
    `Total: ${totalRequests} requests, ${totalCalls} model call(s), ${totalRequests - totalCalls} saved (${(((totalRequests - totalCalls) / totalRequests) * 100).toFixed(1)}%).`,
  );
  line(
    `(roles: owner = ran the model call, follower = joined that run (on its node or another), replay = stored result, l1 = node-local cache)`,
  );

  line('');
  line(
    `Streamed: for each stage, N identical streamed requests at once over ${nodes.length} node(s); the fake model answers after 2 s, ${tokensPerSecond} tokens/s.`,
  );
  line(`Every caller receives the owner's tokens live. First chunk: from sending the request (owner; followers p50 / p99),`);
  line(`and when it reached the followers minus when it reached the owner (behind owner p50 / p99). All measured by this client.`);
  line('');
  line(
    `${pad('stage', 22)}${pad('requests', 10)}${pad('answered', 10)}${pad('same', 6)}${pad('model calls', 13)}` +
      `${pad('first chunk: owner', 20)}${pad('followers', 18)}${pad('behind owner', 16)}${pad('chunks', 8)}roles`,
  );
  // The model waits 2 s before its first token here, so every request of the burst has reached its node:
  // "behind owner" then measures the delivery of the tokens, not when a request arrived.
  const slowStart = (body: { answer: string }) => ({ ...body, answer: `${body.answer} [latency:2000]` });
  const streamed = [
    {
      stage: 'interview-evaluation',
      path: `/api/sessions/demo-${run}/evaluation/stream`,
      body: slowStart(scenarios[0]!.body as { answer: string }),
    },
    {
      stage: 'interview-followup',
      path: `/api/sessions/demo-${run}/follow-up/stream`,
      body: slowStart(scenarios[1]!.body as { answer: string }),
    },
  ];
  for (const s of streamed) {
    const before = await modelStats(model.url);
    const responses = await streamBurst(urls, s.path, s.body, requests);
    const after = await modelStats(model.url);
    const calls = (after.byStage[s.stage] ?? 0) - (before.byStage[s.stage] ?? 0);
    const ok = responses.filter((r) => r.done);
    const same = ok.length > 0 && new Set(ok.map((r) => r.text)).size === 1;
    const owner = ok.find((r) => r.role === 'owner');
    const followers = ok.filter((r) => r.role === 'follower' && r.firstChunkAt !== null);
    const spread = (values: number[]) =>
      values.length ? `${Math.round(percentile(values, 50))} / ${Math.round(percentile(values, 99))} ms` : '–';
    const behind = owner?.firstChunkAt == null ? [] : followers.map((r) => r.firstChunkAt! - owner.firstChunkAt!);
    line(
      `${pad(s.stage, 22)}${pad(requests, 10)}${pad(ok.length, 10)}${pad(same ? 'yes' : 'NO', 6)}${pad(calls, 13)}` +
        `${pad(owner?.firstChunkMs == null ? '–' : `${Math.round(owner.firstChunkMs)} ms`, 20)}` +
        `${pad(spread(followers.map((r) => r.firstChunkMs!)), 18)}${pad(spread(behind), 16)}${pad(ok[0]?.chunkMs.length ?? 0, 8)}` +
        Object.entries(countBy(ok, (r) => r.role ?? '?'))
          .map(([k, v]) => `${k} ${v}`)
          .join(', '),
    );
  }

  if (args.keep) {
    line('');
    line('Running (--keep). Open a dashboard above; stop Redis to watch the hybrid fallback. Ctrl-C to stop.');
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
  }
}

async function shutdown(code: number) {
  await Promise.all(procs.map((p) => p.stop().catch(() => {})));
  process.exit(code);
}

main().then(
  () => shutdown(0),
  (error) => {
    console.error(`demo failed: ${error?.stack ?? error}`);
    return shutdown(1);
  },
);
