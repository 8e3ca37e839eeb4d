/**
 * The quick-start entry point (`npm run demo`, `npm test`) says why it stops when the command it starts
 * cannot run, instead of exiting 1 without a word.
 */
import { execSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const script = join(__dirname, '..', 'flight.mjs');

it('reports a pnpm that cannot be started (replaced under it) and exits 1', () => {
  const bin = mkdtempSync(join(tmpdir(), 'flight-broken-pnpm-'));
  // On PATH and executable, but its interpreter does not exist: spawning it fails with ENOENT.
  writeFileSync(join(bin, 'pnpm'), '#!/nonexistent/interpreter\n');
  chmodSync(join(bin, 'pnpm'), 0o755);
  // Nothing else on PATH but a shell (the script asks `command -v`), so no other pnpm is found after it.
  symlinkSync(execSync('command -v sh', { encoding: 'utf8' }).trim(), join(bin, 'sh'));
  const result = spawnSync(process.execPath, [script, 'demo'], { encoding: 'utf8', env: { ...process.env, PATH: bin } });
  expect(result.status).toBe(1);
  expect(result.stderr).toMatch(/\[flight\] could not run `pnpm --filter @flight\/interview-demo run demo`: spawnSync pnpm ENOENT/);
});
