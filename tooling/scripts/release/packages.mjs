// The packages a release publishes: every package of packages/ that is not private, @flight/core first
// (so nothing reaches npm before what it needs), then the others by name.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** `{ dir, manifest }` of each public package under `root`. */
export function publicPackages(root) {
  return readdirSync(join(root, 'packages'))
    .map((name) => join(root, 'packages', name))
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
    .filter((p) => !p.manifest.private)
    .sort((a, b) => rank(a) - rank(b) || a.manifest.name.localeCompare(b.manifest.name));
}

const rank = (p) => (p.manifest.name === '@flight/core' ? 0 : 1);

/** The public packages of `root` that RELEASING.md does not name (its setup must cover every one). */
export function unlistedPackages(root) {
  const doc = readFileSync(join(root, 'RELEASING.md'), 'utf8');
  return publicPackages(root)
    .map((p) => p.manifest.name)
    .filter((name) => !doc.includes(`\`${name}\``));
}

/**
 * Whether a package's `engines.node` admits Node `major` (the ranges our packages use: `>=N`). npm on an older
 * Node picks dependency versions for that Node, so a package that does not run there is checked on a newer one.
 */
export function admitsNode(manifest, major) {
  const floor = /^>=\s*(\d+)/.exec(manifest?.engines?.node ?? '');
  return !floor || major >= Number(floor[1]);
}
