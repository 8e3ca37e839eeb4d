// The trusted publishers of the public packages (trusted-publishers.json) and the pre-flight publish.mjs
// makes before it publishes anything: every package it would publish must have a trusted-publisher entry,
// and, inside GitHub Actions, must exist on npm already (npm attaches a trusted publisher only to a package
// that exists; the first version is published by hand, RELEASING.md step 4). A release that would stop
// half-way names every such package first and publishes nothing.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publicPackages } from './packages.mjs';

const LIST = join(dirname(fileURLToPath(import.meta.url)), 'trusted-publishers.json');

/** The trusted-publisher list: `{ provider, repository, workflow, environment, packages }`. */
export function trustedPublishers(path = LIST) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** The public packages of `root` without an entry in the trusted-publisher list at `path`. */
export function untrustedPackages(root, path = LIST) {
  const listed = new Set(trustedPublishers(path).packages);
  return publicPackages(root)
    .map((p) => p.manifest.name)
    .filter((name) => !listed.has(name));
}

/**
 * What stops `names` from being published by the workflow: one line per package, empty when nothing does.
 * `exists(name)` says whether the package is on npm at all (asked only when `oidc`: inside GitHub Actions).
 */
export function preflight(names, { oidc, exists, path = LIST }) {
  const listed = new Set(trustedPublishers(path).packages);
  const problems = [];
  for (const name of names) {
    if (!listed.has(name)) problems.push(`${name} has no trusted-publisher entry in tooling/scripts/release/trusted-publishers.json`);
    else if (oidc && !exists(name))
      problems.push(
        `${name} is not on npm yet: its first version is published by hand, then its trusted publisher is added (RELEASING.md)`,
      );
  }
  return problems;
}

/** The `npm trust github` command that sets up the trusted publisher of `name` (a maintainer runs it once). */
export function trustCommand(name, path = LIST) {
  const { repository, workflow, environment } = trustedPublishers(path);
  return `npm trust github ${name} --file ${workflow} --repository ${repository} --environment ${environment} --yes`;
}
