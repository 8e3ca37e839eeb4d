/**
 * Scenario 15 — model calls through `@flight/ai-sdk` (see ai-sdk-run.ts for what is measured). The AI SDK 7
 * needs Node >= 22: on an older Node the measurement runs on Node 22 from the npm registry
 * (`npx -p node@22`), with the same packages as the run (built or sources).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchContext, ResultRow } from '../context.js';
import { prefixOf } from '../context.js';
import { libraryExecArgv } from '../library.js';
import type { AiSdkRunConfig } from './ai-sdk-run.js';

const here = dirname(fileURLToPath(import.meta.url));

export interface AiSdkOptions {
  calls: number;
  herdRounds: number;
  herdCallersPerNode: number;
}

export function aiSdkOptions(quick: boolean): AiSdkOptions {
  return { calls: quick ? 150 : 600, herdRounds: quick ? 2 : 5, herdCallersPerNode: 100 };
}

export async function runAiSdk(ctx: BenchContext, opts: AiSdkOptions): Promise<ResultRow[]> {
  const config: AiSdkRunConfig = { redisUrl: ctx.redis.url, prefix: prefixOf(ctx, 'ai-sdk', 'run'), ...opts };
  const node = Number(process.versions.node.split('.')[0]) >= 22 ? [process.execPath] : ['npx', '-y', '-p', 'node@22', 'node'];
  const child = spawn(node[0]!, [...node.slice(1), ...libraryExecArgv(), '--import', 'tsx', join(here, 'ai-sdk-run.ts')], {
    cwd: join(here, '..', '..'),
    env: { ...process.env, FLIGHT_AI_BENCH: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (piece: string) => (output += piece));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`the ai-sdk measurement exited with ${code}`);
  const rows = JSON.parse(output.trim().split('\n').at(-1)!) as ResultRow[];
  for (const r of rows)
    ctx.log(
      `ai-sdk ${r.contender}: uncontended p50 ${r.uncontendedP50Ms} ms (over the bare call ${r.overheadP50Ms}, over the floor ${r.overFloorP50Ms}), herd upstream ${(r.upstreamCallsPerRound as number[] | undefined)?.join('/') ?? '-'} p99 ${r.p99Ms ?? '-'} ms`,
    );
  return rows;
}
