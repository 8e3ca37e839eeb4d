// One child process of a release check, run to its end: whether it exited 0, and what it printed.
import { spawnSync } from 'node:child_process';

/** Runs `cmd args` in `cwd`: `{ ok, output }` (stdout then stderr, trimmed). */
export function runCommand(cwd, cmd, args, { env = process.env, timeoutMs = 300_000 } = {}) {
  const result = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: timeoutMs, env });
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}`.trim() };
}
