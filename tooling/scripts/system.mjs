// Small system helpers shared by the tooling scripts (Node built-ins only): is a command on PATH, and
// installing Debian packages with apt-get when we are allowed to.
import { spawnSync } from 'node:child_process';

/** True when `bin` is a command on PATH. */
export const has = (bin) => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;

/** Installs Debian packages with apt-get when we may (root, or passwordless sudo). */
export function aptInstall(what, packages) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const sudo = root ? [] : has('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0 ? ['sudo', '-n'] : null;
  if (!sudo || !has('apt-get')) return;
  console.log(`[flight] ${what} is missing: installing it with apt-get`);
  const prefix = sudo.join(' ');
  spawnSync('sh', ['-c', `${prefix} apt-get update -qq && DEBIAN_FRONTEND=noninteractive ${prefix} apt-get install -y -qq ${packages}`], {
    stdio: 'inherit',
  });
}
