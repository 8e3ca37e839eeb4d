// Shared vitest config: every @flight/* import resolves to the package's TypeScript
// source, so tests never need a build. Each package's vitest.config.ts is one call.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Maps each workspace package's exports (".", "./testing", ...) to its src entry files. */
export function sourceAliases() {
  const aliases = [];
  for (const group of ['packages', 'apps']) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const pkgFile = join(dir, name, 'package.json');
      if (!existsSync(pkgFile)) continue;
      const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
      const entries = pkg.flightSource ?? {};
      for (const [sub, file] of Object.entries(entries)) {
        const find = sub === '.' ? pkg.name : `${pkg.name}/${sub.replace(/^\.\//, '')}`;
        aliases.push({ find: new RegExp(`^${find.replace(/[/.]/g, '\\$&')}$`), replacement: join(dir, name, file) });
      }
    }
  }
  return aliases;
}

/** A vitest project config for one workspace package. */
export function flightProject(name, overrides = {}) {
  return {
    resolve: { alias: sourceAliases() },
    test: {
      name,
      include: ['test/**/*.test.ts'],
      testTimeout: 30_000,
      hookTimeout: 60_000,
      globalSetup: [join(root, 'tooling/vitest/redis-global-setup.js')],
      ...overrides,
    },
  };
}
