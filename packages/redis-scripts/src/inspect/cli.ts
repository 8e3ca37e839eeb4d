/**
 * The `flight` command both Redis adapters install: look at the flights of a running cluster from a shell.
 *
 *   flight list [--stage <stage>] [--all] [--limit N]
 *   flight show <stage> <key>
 *   flight forget <stage> <key>
 *   flight watch [--stage <stage>] [--interval ms] [--rounds N]
 *   flight --version
 *
 * with `--redis <url>` (default `REDIS_URL`, else redis://127.0.0.1:6379; with `--cluster`, a comma-separated
 * list of seed nodes), `--prefix` (the coordinators' `prefix`, default `flight`) and `--json` (one JSON
 * document, or one JSON line per change for `watch`). Read-only except `forget`. Exit codes: 0 done,
 * 1 Redis failed, 2 bad usage, 3 no such flight (`show`, `forget`).
 */
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { FlightValidationError } from '@flight/core';
import { isActive } from '@flight/core/adapter';
import { DEFAULT_PREFIX } from '../options';
import type { FlightInspection, Inspector } from './inspector';

export const EXIT = { ok: 0, redis: 1, usage: 2, notFound: 3 } as const;

/** What the command needs of a coordinator. */
export type CliCoordinator = Inspector & { forget(ref: { stage: string; key: string }): Promise<{ ok: boolean }> };

export interface CliConnection {
  /** Redis URLs: one server, or a cluster's seed nodes. */
  urls: string[];
  cluster: boolean;
  prefix: string;
}

export interface CliEnv {
  /** Opens a coordinator (the adapter's own client library) and what closes it. */
  connect(connection: CliConnection): { coordinator: CliCoordinator; close(): Promise<void> };
  out(text: string): void;
  err(text: string): void;
  /** Stops `watch` (SIGINT in the shell). */
  signal?: AbortSignal;
  /** What `--version` prints: the adapter package's name and version. */
  version: string;
}

export const USAGE = `usage: flight <command> [options]

commands:
  list [--stage <stage>] [--all] [--limit N]  flights in progress, of every stage or one (--all: every stored one)
  show <stage> <key>                          one flight
  forget <stage> <key>                        forget a flight cluster-wide (its result is no longer served)
  watch [--stage <stage>] [--interval ms]     the flights in progress, then each start, change and end

options:
  --redis <url>     Redis URL (default: REDIS_URL, else redis://127.0.0.1:6379); with --cluster, seed nodes, comma-separated
  --cluster         connect to a Redis Cluster
  --prefix <name>   the coordinators' key prefix (default: flight)
  --json            machine-readable output
  --version         the command's package and version
`;

class UsageError extends Error {}

const COMMANDS = ['list', 'show', 'forget', 'watch'] as const;
type Command = (typeof COMMANDS)[number];
const isCommand = (name: string | undefined): name is Command => (COMMANDS as readonly (string | undefined)[]).includes(name);

function integer(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer, got ${value}`);
  return n;
}

const seconds = (ms: number | undefined) => (ms === undefined ? '-' : `${(ms / 1000).toFixed(1)}s`);

const HEADER = ['STAGE', 'FLIGHT', 'STATUS', 'EPOCH', 'AGE', 'OWNER', 'HEARTBEAT', 'FOLLOWERS', 'EXPIRES'];

function row(f: FlightInspection): string[] {
  return [
    f.stage,
    f.key ?? f.digest,
    f.status + (f.forgotten ? '*' : ''),
    String(f.epoch),
    seconds(f.ageMs),
    f.owner,
    seconds(f.heartbeatAgeMs),
    String(f.followers),
    seconds(f.expiresInMs),
  ];
}

function table(flights: FlightInspection[]): string {
  const rows = [HEADER, ...flights.map(row)];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function describe(f: FlightInspection): string {
  const lines = [
    `flight     ${f.stage} ${f.key ?? ''}`.trimEnd(),
    `redis key  ${f.redisKey}`,
    `status     ${f.status}${f.forgotten ? ' (forgotten)' : ''}`,
    `epoch      ${f.epoch} (${f.takeovers} takeovers)`,
    `age        ${seconds(f.ageMs)}`,
    `owner      ${f.owner}`,
    `heartbeat  ${seconds(f.heartbeatAgeMs)} ago`,
    `followers  ${f.followers}`,
    `expires in ${seconds(f.expiresInMs)}`,
  ];
  if (f.resultBytes !== undefined) lines.push(`result     ${f.resultBytes} bytes`);
  if (f.failure) lines.push(`failure    ${f.failure.type} ${f.failure.code}${f.failure.retryable ? ' (retryable)' : ''}`);
  return lines.join('\n');
}

type Parsed = ReturnType<typeof parse>;

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      redis: { type: 'string' },
      cluster: { type: 'boolean', default: false },
      prefix: { type: 'string', default: DEFAULT_PREFIX },
      json: { type: 'boolean', default: false },
      stage: { type: 'string' },
      all: { type: 'boolean', default: false },
      limit: { type: 'string' },
      interval: { type: 'string' },
      rounds: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'v', default: false },
    },
  });
  const [command, ...rest] = positionals;
  return { values, command, rest };
}

function refOf(rest: string[], command: string): { stage: string; key: string } {
  if (rest.length !== 2) throw new UsageError(`${command} takes <stage> <key>`);
  return { stage: rest[0]!, key: rest[1]! };
}

type WatchEvent = 'running' | 'started' | 'changed' | 'ended';

/**
 * Prints the flights in progress at the first look (`running`), then each flight that starts, changes
 * (status or epoch) or ends between two looks. A flight that had ended before the first look is not news.
 */
async function watch(parsed: Parsed, coordinator: CliCoordinator, env: CliEnv): Promise<void> {
  const stage = parsed.values.stage;
  const intervalMs = integer('interval', parsed.values.interval, 1000);
  const rounds = parsed.values.rounds === undefined ? Infinity : integer('rounds', parsed.values.rounds, 1);
  let known: Map<string, FlightInspection> | undefined;
  const print = (event: WatchEvent, f: FlightInspection) =>
    env.out(parsed.values.json ? JSON.stringify({ event, flight: f }) : [event.padEnd(7), ...row(f)].join('  '));
  if (!parsed.values.json) env.out(['EVENT  ', ...HEADER].join('  '));
  for (let round = 0; round < rounds && !env.signal?.aborted; round++) {
    if (round > 0) await sleep(intervalMs, undefined, { signal: env.signal }).catch(() => undefined);
    if (env.signal?.aborted) break;
    const now = new Map((await coordinator.listFlights({ stage, all: true, limit: 10_000 })).map((f) => [f.redisKey, f]));
    for (const [redisKey, f] of now) {
      const before = known?.get(redisKey);
      if (!known) {
        if (isActive(f.status)) print('running', f);
      } else if (!before) print(isActive(f.status) ? 'started' : 'ended', f);
      else if (before.status !== f.status || before.epoch !== f.epoch) print(isActive(f.status) ? 'changed' : 'ended', f);
    }
    known = now;
  }
}

async function run(parsed: Parsed, command: Command, coordinator: CliCoordinator, env: CliEnv): Promise<number> {
  const { values, rest } = parsed;
  const json = values.json;
  switch (command) {
    case 'list': {
      const flights = await coordinator.listFlights({
        stage: values.stage,
        all: values.all,
        limit: integer('limit', values.limit, 100),
      });
      env.out(json ? JSON.stringify(flights) : flights.length === 0 ? 'no flights' : table(flights));
      return EXIT.ok;
    }
    case 'show': {
      const ref = refOf(rest, command);
      const flight = await coordinator.inspect(ref.stage, ref.key);
      if (!flight) {
        env.err(`no flight ${ref.stage} ${ref.key}`);
        return EXIT.notFound;
      }
      env.out(json ? JSON.stringify(flight) : describe(flight));
      return EXIT.ok;
    }
    case 'forget': {
      const ref = refOf(rest, command);
      const reply = await coordinator.forget(ref);
      if (json) env.out(JSON.stringify({ forgotten: reply.ok }));
      else env.out(reply.ok ? `forgot ${ref.stage} ${ref.key}` : `no flight ${ref.stage} ${ref.key}`);
      return reply.ok ? EXIT.ok : EXIT.notFound;
    }
    case 'watch':
      await watch(parsed, coordinator, env);
      return EXIT.ok;
  }
}

/** Runs the `flight` command with `argv` (the arguments after the program); resolves its exit code. */
export async function runFlightCli(argv: string[], env: CliEnv): Promise<number> {
  let parsed: Parsed;
  let command: Command;
  try {
    parsed = parse(argv);
    if (parsed.values.help) {
      env.out(USAGE);
      return EXIT.ok;
    }
    if (parsed.values.version) {
      env.out(env.version);
      return EXIT.ok;
    }
    if (!isCommand(parsed.command)) throw new UsageError(parsed.command ? `unknown command ${parsed.command}` : 'no command');
    command = parsed.command;
  } catch (error) {
    env.err(`flight: ${(error as Error).message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  const urls = (parsed.values.redis ?? (process.env.REDIS_URL || 'redis://127.0.0.1:6379')).split(',').map((u) => u.trim());
  let connection: ReturnType<CliEnv['connect']>;
  try {
    for (const url of urls) new URL(url);
    connection = env.connect({ urls, cluster: parsed.values.cluster, prefix: parsed.values.prefix });
  } catch (error) {
    env.err(`flight: ${redacted((error as Error).message, urls)}`);
    return EXIT.usage;
  }
  const { coordinator, close } = connection;
  try {
    return await run(parsed, command, coordinator, env);
  } catch (error) {
    if (error instanceof UsageError || error instanceof FlightValidationError) {
      env.err(`flight: ${error.message}`);
      return EXIT.usage;
    }
    env.err(`flight: ${redacted((error as Error).message, urls)} (redis: ${urls.map(withoutPassword).join(', ')})`);
    return EXIT.redis;
  } finally {
    await close();
  }
}

/** `text` with each of `urls` in it fit to print (`withoutPassword`). */
function redacted(text: string, urls: string[]): string {
  return urls.reduce((out, url) => out.split(url).join(withoutPassword(url)), text);
}

/** A Redis URL fit to print: its password (if any) replaced by `***`. */
function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<redis url>';
  }
}
