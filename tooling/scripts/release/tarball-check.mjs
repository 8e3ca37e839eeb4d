// What a user's tools follow in a packed tarball: its version, dependency ranges that are real versions
// (no `workspace:`/`catalog:`, no private workspace package), every export target and bin a shipped file
// (the workspace's `@flight/source` condition, which points at `src/`, is not published), and every
// source map either shipping each source it names or carrying its content.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';

const PRIVATE = ['@flight/redis-scripts', '@flight/http-shared'];

export function readPackedManifest(tarball) {
  return JSON.parse(execFileSync('tar', ['-xOzf', tarball, 'package/package.json'], { encoding: 'utf8' }));
}

/** `{ problems, summary }` for the tarball of `name`, expected at `version`. */
export function checkTarball(name, version, tarball) {
  const problems = [];
  const manifest = readPackedManifest(tarball);
  if (manifest.version !== version) problems.push(`${name}: packed version ${manifest.version}, expected ${version}`);
  const ranges = ['dependencies', 'peerDependencies', 'optionalDependencies'].flatMap((field) => Object.entries(manifest[field] ?? {}));
  const unresolved = ranges.filter(([, range]) => /^(workspace|catalog):/.test(range));
  if (unresolved.length > 0) problems.push(`${name}: packed manifest keeps ${unresolved.map(([n, r]) => `${n}@${r}`).join(', ')}`);
  const internal = ranges.filter(([n]) => PRIVATE.includes(n));
  if (internal.length > 0) problems.push(`${name}: depends on an unpublished workspace package (${internal.map(([n]) => n).join(', ')})`);

  const files = new Set(
    execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, '')),
  );
  const targets = [];
  const walk = (value) => {
    if (typeof value === 'string') targets.push(value);
    else if (value && typeof value === 'object')
      for (const [key, inner] of Object.entries(value)) {
        if (key === '@flight/source') problems.push(`${name}: the packed exports keep the @flight/source condition`);
        walk(inner);
      }
  };
  walk(manifest.exports);
  walk(manifest.bin);
  for (const target of targets)
    if (!files.has(target.replace(/^\.\//, ''))) problems.push(`${name}: ${target} is exported but not shipped`);
  let maps = 0;
  for (const file of files) {
    if (!file.endsWith('.map')) continue;
    maps++;
    const map = JSON.parse(execFileSync('tar', ['-xOzf', tarball, `package/${file}`], { encoding: 'utf8' }));
    map.sources.forEach((source, i) => {
      const shippedSource = join(dirname(file), source).replace(/\\/g, '/');
      if (!files.has(shippedSource) && typeof map.sourcesContent?.[i] !== 'string')
        problems.push(`${name}: ${file} names ${source}, neither shipped nor inlined`);
    });
  }
  const summary = `${ranges.length} dependency ranges resolved (${ranges.map(([n, r]) => `${n} ${r}`).join('; ') || 'none'}); ${targets.length} export targets shipped, ${maps} source maps resolve`;
  return { problems, summary, manifest };
}
