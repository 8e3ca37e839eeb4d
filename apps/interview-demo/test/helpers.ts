import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { APP_DIR, startModelProcess, startNodeProcesses, type Proc } from '../src/cluster.js';

export const ARTIFACTS = join(APP_DIR, 'test-artifacts');

export interface TestCluster {
  model: Proc & { baseUrl: string };
  nodes: Proc[];
  urls: string[];
  prefix: string;
  stop(): Promise<void>;
}

/** The fake model and `nodes` node processes on one Redis, under a prefix of their own. */
export async function startCluster(options: {
  name: string;
  redisUrl: string;
  nodes?: number;
  latencyMs?: number;
  /** Tokens per second of the fake model's streamed answers. @default 40 */
  tokensPerSecond?: number;
  heartbeatMs?: number;
  mode?: 'hybrid' | 'distributed' | 'local';
}): Promise<TestCluster> {
  const prefix = `flight:test:${options.name}:${randomBytes(4).toString('hex')}`;
  const logDir = join(ARTIFACTS, 'logs', options.name);
  const model = await startModelProcess({
    latencyMs: options.latencyMs ?? 300,
    tokensPerSecond: options.tokensPerSecond ?? 40,
    logFile: join(logDir, 'model.log'),
  });
  let nodes: Proc[];
  try {
    nodes = await startNodeProcesses(options.nodes ?? 3, (i) => ({
      nodeId: `${options.name}-${i + 1}`,
      redisUrl: options.redisUrl,
      modelBaseUrl: model.baseUrl,
      mode: options.mode ?? 'hybrid',
      prefix,
      heartbeatMs: options.heartbeatMs ?? 500,
      logFile: join(logDir, `node-${i + 1}.log`),
    }));
  } catch (error) {
    await model.stop();
    throw error;
  }
  return {
    model,
    nodes,
    urls: nodes.map((n) => n.url),
    prefix,
    async stop() {
      await Promise.all([...nodes, model].map((p) => p.stop()));
    },
  };
}

export async function resetModel(model: { url: string }): Promise<void> {
  await fetch(`${model.url}/reset`, { method: 'POST' });
}

/** Sum of a Prometheus counter over all label sets matching `labels`. */
export async function metric(url: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

export async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn().catch(() => undefined);
    if (value) return value;
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}
