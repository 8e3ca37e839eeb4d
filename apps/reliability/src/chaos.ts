/**
 * `pnpm chaos` (about 2 minutes of faults) and `pnpm chaos --quick` (30 s, under 2 minutes in all).
 * Options: --quick, --duration <ms>, --seed <n>, --verbose, --server valkey (the run's server is a
 * valkey-server >= 8.1 instead of redis-server: there runs nobody touched complete with `SET … IFEQ`; the
 * binary is the one `npm test` builds, or FLIGHT_VALKEY_SERVER), --sentinel (a primary, a replica and three
 * Sentinels, with failovers among the faults). Prints one summary line, then one line
 * per wrong answer (its kind, detail and the faults just before it) and per unhandled error; exits 1 when
 * wrong, unhandled or unanswered is not 0.
 */
import { valkeyServerBinary } from '@flight/test-servers';
import { formatProblems, formatSummary, runChaos } from './chaos-run.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const value = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? undefined : args[i + 1];
};
const quick = flag('quick');
const seed = Number(value('seed') ?? Date.now() % 1_000_000);
const server = value('server') ?? 'redis';
if (server !== 'redis' && server !== 'valkey') {
  console.error(`--server takes redis or valkey, not ${server}`);
  process.exit(2);
}
const sentinel = flag('sentinel');
const summary = await runChaos({
  serverBinary: server === 'valkey' ? valkeyServerBinary() : undefined,
  sentinel,
  durationMs: Number(value('duration') ?? (quick ? 30_000 : 120_000)),
  faultEveryMs: quick ? 2500 : 2000,
  keys: quick ? 150 : 400,
  perTick: 3,
  tickMs: 20,
  seed,
  log: flag('verbose') ? (line) => console.error(`[chaos] ${line}`) : undefined,
});
console.log(`${formatSummary(summary)} seed=${seed}${server === 'valkey' ? ' server=valkey' : ''}${sentinel ? ' sentinel' : ''}`);
for (const line of formatProblems(summary)) console.log(line);
process.exit(summary.wrong === 0 && summary.unhandled === 0 && summary.unanswered === 0 ? 0 : 1);
