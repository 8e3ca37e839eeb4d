/**
 * The `flight` command of a Redis adapter, run as a user runs it (a child process) against a real Redis
 * or Cluster: what it prints, what it never prints (an owner's token), and its exit codes.
 */
import { execFile } from 'node:child_process';
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

    const asTable = await flight('list', '--stage', 'report', '--all');
    expect(asTable.code).toBe(0);
    expect(asTable.stdout.split('\n')[0]).toMatch(/^FLIGHT\s+STATUS\s+EPOCH\s+AGE\s+OWNER\s+HEARTBEAT\s+FOLLOWERS\s+EXPIRES$/);
    expect(asTable.stdout.trim().split('\n')).toHaveLength(4);

    expect(JSON.parse((await flight('show', 'report', 'done', '--json')).stdout)).toMatchObject({
      status: 'SUCCEEDED',
      resultBytes: 10,
      forgotten: false,
    });
    const forgot = await flight('forget', 'report', 'done');
    expect(forgot).toMatchObject({ code: 0, stdout: 'forgot report done\n' });
    expect(JSON.parse((await flight('show', 'report', 'done', '--json')).stdout)).toMatchObject({ forgotten: true });

    // watch: the flights there at its first look, then one that starts while it watches.
    const watching = flight('watch', '--stage', 'report', '--interval', '200', '--rounds', '8', '--json');
    await new Promise((resolve) => setTimeout(resolve, 1200));
    await startFlight(c, { stage: 'report', key: 'late' }, token, true, LEASE);
    const watched = await watching;
    expect(watched.code).toBe(0);
    const events = watched.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; flight: { digest: string; status: string } });
    const late = flightKeys(prefix, { stage: 'report', key: 'late' }).tag;
    expect(events.filter((e) => e.event === 'started').map((e) => e.flight.digest)).toContain(late);
    expect(events.filter((e) => e.event === 'started')).toHaveLength(3);
    expect(watched.stdout).not.toContain(token);

    // Exit codes: 3 for no such flight, 2 for bad usage (with the usage), 1 when Redis cannot be reached.
    expect((await flight('show', 'report', 'never-ran')).code).toBe(3);
    expect((await flight('forget', 'report', 'never-ran')).code).toBe(3);
    for (const bad of [
      ['list'],
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
