/**
 * The system Chromium for browser tests (playwright-core is given its path; nothing is downloaded), and
 * the flags a headless run in a container needs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The path of the system Chromium, or an error saying how to get one (never a raw shell error). */
export function systemChromium(): string {
  for (const candidate of ['/usr/bin/chromium', '/usr/bin/chromium-browser']) if (existsSync(candidate)) return candidate;
  try {
    const found = execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim();
    if (found) return found;
  } catch {
    // Reported below.
  }
  throw new Error('browser tests need a system Chromium: run `npm test` (it installs one with apt-get) or `apt-get install -y chromium`');
}

/** Chromium flags for a headless run as root in a container, without background traffic. */
export const HEADLESS_CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
