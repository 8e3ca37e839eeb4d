/**
 * The `flight` command of a Redis adapter, run as a user runs it (a child process) against a real Redis
 * or Cluster: what it prints, what it never prints (an owner's token), and its exit codes.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { flightKeys, type RedisCoordinator } from '@flight/redis-scripts';
import { startFlight } from './inspect-check';

const here = dirname(fileURLToPath(import.meta.url));
// Long enough that no flight's lease lapses while the command runs again and again (nothing heartbeats here).
const LEASE = { takeoverAfterMs: 30_000, leaseTtlMs: 60_000, maxRunMs: 120_000 };

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment without REDIS_URL: every run names its server. */
function withoutRedisUrl(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.REDIS_URL;
  return env;
}

/** Runs the adapter's `src/cli.ts` (`cli`) with `args`, its @flight imports resolved to source. */
export function runCli(cli: string, args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=@flight/source', '--import', 'tsx', cli, ...args],
      { cwd: join(here, '..'), timeout: 30_000, env: withoutRedisUrl() },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * Starts `flight watch` (`args` after it) and hands out its output lines as they come; `stop()` sends the
 * SIGINT a shell's Ctrl-C sends and resolves the exit code.
 */
function watchCli(cli: string, args: string[]) {
  const child = spawn(process.execPath, ['--conditions=@flight/source', '--import', 'tsx', cli, 'watch', ...args], {
    cwd: join(here, '..'),
    env: withoutRedisUrl(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = once(child, 'exit') as Promise<[number | null]>;
  return {
    /** The next line it prints. */
    next: async () => {
      const line = await lines.next();
      if (line.done) throw new Error('flight watch ended');
      return line.value;
    },
    stop: async () => {
      child.kill('SIGINT');
      return (await exited)[0];
    },
  };
}

/**
 * Checks the command against the server(s) at `redis` (`--cluster` when `cluster`), with flights made by
 * `make`'s coordinator. `full`: also forget, watch and every exit code (a cluster run checks list and show).
 */
export async function checkCli(
  cli: string,
  target: { redis: string; cluster: boolean },
  make: (prefix: string) => RedisCoordinator,
  full: boolean,
): Promise<void> {
  const prefix = `flight-cli-${randomUUID().slice(0, 8)}`;
  const c = make(prefix);
  const token = `secret-${randomUUID()}`;
  const base = ['--redis', target.redis, '--prefix', prefix, ...(target.cluster ? ['--cluster'] : [])];
  const flight = (...args: string[]) => runCli(cli, [...args, ...base]);
  try {
    await startFlight(c, { stage: 'report', key: 'running' }, token, true, LEASE);
    await startFlight(c, { stage: 'report', key: 'pending' }, token, false, LEASE);
    const done = await startFlight(c, { stage: 'report', key: 'done' }, token, true, LEASE);
    await c.complete(done, { result: 'result-123', resultTtlMs: 60_000 });

    const listed = await flight('list', '--stage', 'report', '--json');
    expect(listed.code).toBe(0);
    const flights = JSON.parse(listed.stdout) as { status: string; digest: string }[];
    expect(flights.map((f) => f.status).sort()).toEqual(['PENDING', 'RUNNING']);
    expect(listed.stdout).not.toContain(token);

    const shown = await flight('show', 'report', 'running');
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('status     RUNNING');
    expect(shown.stdout).toContain('owner      node-a');
    expect(shown.stdout).toContain(`redis key  ${flightKeys(prefix, { stage: 'report', key: 'running' }).meta}`);
    expect(shown.stdout).not.toContain(token);
    if (!full) return;

    const other = await startFlight(c, { stage: 'digest', key: 'other' }, token, true, LEASE);
    const asTable = await flight('list', '--stage', 'report', '--all');
    expect(asTable.code).toBe(0);
    expect(asTable.stdout.split('\n')[0]).toMatch(/^STAGE\s+FLIGHT\s+STATUS\s+EPOCH\s+AGE\s+OWNER\s+HEARTBEAT\s+FOLLOWERS\s+EXPIRES$/);
    expect(asTable.stdout.trim().split('\n')).toHaveLength(4);
    // Without --stage: every stage's flights in progress.
    const everyStage = JSON.parse((await flight('list', '--json')).stdout) as { stage: string; status: string }[];
    expect(everyStage.map((f) => `${f.stage} ${f.status}`).sort()).toEqual(['digest RUNNING', 'report PENDING', 'report RUNNING']);

    expect(JSON.parse((await flight('show', 'report', 'done', '--json')).stdout)).toMatchObject({
      status: 'SUCCEEDED',
      resultBytes: 10,
      forgotten: false,
    });
    const forgot = await flight('forget', 'report', 'done');
    expect(forgot).toMatchObject({ code: 0, stdout: 'forgot report done\n' });
    expect(JSON.parse((await flight('show', 'report', 'done', '--json')).stdout)).toMatchObject({ forgotten: true });

    // watch: a header, the flights in progress at its first look (never the finished ones), then each
    // flight that starts while it watches; Ctrl-C ends it with 0.
    const table = watchCli(cli, ['--stage', 'report', '--interval', '100', ...base]);
    expect(await table.next()).toMatch(/^EVENT\s+STAGE\s+FLIGHT\s+STATUS\s+EPOCH/);
    const first = [await table.next(), await table.next()];
    expect(first.map((line) => line.split(/\s+/).slice(0, 2).join(' ')).sort()).toEqual(['running report', 'running report']);
    expect(await table.stop()).toBe(0);

    const watching = watchCli(cli, ['--interval', '100', '--json', ...base]);
    type Event = { event: string; flight: { digest: string; stage: string; status: string } };
    const next = async () => JSON.parse(await watching.next()) as Event;
    const firstLook = [await next(), await next(), await next()];
    expect(firstLook.map((e) => `${e.event} ${e.flight.stage} ${e.flight.status}`).sort()).toEqual([
      'running digest RUNNING',
      'running report PENDING',
      'running report RUNNING',
    ]);
    await startFlight(c, { stage: 'report', key: 'late' }, token, true, LEASE);
    const late = flightKeys(prefix, { stage: 'report', key: 'late' }).tag;
    expect(await next()).toMatchObject({ event: 'started', flight: { digest: late, status: 'RUNNING' } });
    await c.complete(other, { result: 'r', resultTtlMs: 60_000 });
    expect(await next()).toMatchObject({ event: 'ended', flight: { stage: 'digest', status: 'SUCCEEDED' } });
    expect(await watching.stop()).toBe(0);

    const version = await flight('--version');
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^@flight\/redis-(ioredis|node) \d+\.\d+\.\d+/);

    // Exit codes: 3 for no such flight, 2 for bad usage (with the usage), 1 when Redis cannot be reached.
    expect((await flight('show', 'report', 'never-ran')).code).toBe(3);
    expect((await flight('forget', 'report', 'never-ran')).code).toBe(3);
    for (const bad of [
      ['bogus'],
      ['list', '--stage', 'report', '--limit', 'x'],
      ['show', 'report'],
      ['list', '--stage', 'not a stage'],
      ['--nope'],
    ]) {
      const run = await flight(...bad);
      expect({ bad, code: run.code }).toEqual({ bad, code: 2 });
      expect(run.stderr).toMatch(/^flight: /);
    }
    const refused = await runCli(cli, ['list', '--stage', 'report', '--redis', 'redis://127.0.0.1:1']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^flight: /);
    // Credentials in the URL are never printed.
    const secret = await runCli(cli, ['list', '--stage', 'report', '--redis', 'redis://user:s3cret-pw@127.0.0.1:1']);
    expect(secret.code).toBe(1);
    expect(secret.stderr).toContain('redis://user:***@127.0.0.1:1');
    expect(secret.stderr).not.toContain('s3cret-pw');
  } finally {
    await c.close();
  }
}
