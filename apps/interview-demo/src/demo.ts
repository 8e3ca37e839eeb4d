/**
 * `pnpm demo`: the fake model and 3 nodes sharing Redis, their URLs, a short scripted load that
 * prints requests vs. model calls, then everything stops (`--keep` leaves it running).
 *
 * Options: --keep, --nodes <n> (default 3), --requests <n> (default 300).
 * Env: REDIS_URL (default redis://127.0.0.1:6379), MODEL_LATENCY_MS (default 800), FLIGHT_MODE.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { APP_DIR, redisAnswers, startModelProcess, startNodeProcesses, type Proc } from './cluster.js';
import { burst, countBy, modelStats } from './load.js';

const { values: args } = parseArgs({
  options: {
    keep: { type: 'boolean', default: false },
    nodes: { type: 'string', default: '3' },
    requests: { type: 'string', default: '300' },
  },
});

const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const mode = (process.env.FLIGHT_MODE ?? 'hybrid') as 'hybrid';
const requests = Math.max(1, Number(args.requests));
const logDir = join(APP_DIR, '.tmp', 'demo-logs');
const procs: Proc[] = [];

const line = (s = '') => process.stdout.write(`${s}\n`);
const pad = (s: unknown, n: number) => String(s).padEnd(n);

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

  const model = await startModelProcess({ latencyMs: Number(process.env.MODEL_LATENCY_MS ?? 800), logFile: join(logDir, 'model.log') });
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
  for (const node of nodes) line(`${pad(node.name, 12)} ${node.url}   dashboard ${node.url}/   metrics ${node.url}/metrics`);
  line(`logs         ${logDir}`);
  line('');

  const run = Date.now().toString(36);
  const urls = nodes.map((n) => n.url);
  const scenarios = [
    { stage: 'interview-evaluation', path: `/api/sessions/demo-${run}/evaluation`, body: { questionNumber: 1, question: 'What is single-flight?', answer: 'One caller runs the work, the others share its result.' }, n: requests },
    { stage: 'interview-followup', path: `/api/sessions/demo-${run}/follow-up`, body: { currentQuestion: 'q1', answer: 'One caller runs the work, the others share its result.' }, n: requests },
    { stage: 'interview-extraction', path: `/api/sessions/demo-${run}/extraction`, body: { fileUrl: `https://files.example/resume-${run}.pdf` }, n: Math.min(requests, 60) },
    { stage: 'interview-demeanor', path: `/api/sessions/demo-${run}/demeanor`, body: { imageUrl: `https://files.example/frame-${run}-0001.jpg` }, n: Math.min(requests, 60) },
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
      `${pad(s.stage, 22)}${pad(s.n, 10)}${pad(ok.length, 10)}${pad(same ? 'yes' : 'NO', 6)}${pad(calls, 13)}${pad(`${took} ms`, 9)}${Object.entries(roles)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
  }
  line('');
  line(`Total: ${totalRequests} requests, ${totalCalls} model call(s), ${totalRequests - totalCalls} saved (${(((totalRequests - totalCalls) / totalRequests) * 100).toFixed(1)}%).`);
  line(`(roles: owner = ran the model call, follower = joined that run (on its node or another), replay = stored result, l1 = node-local cache)`);

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
