/**
 * Reads a README the way a new user does: the install line (the first `npm i` / `npm install` in a `sh`
 * block) and the TypeScript examples (every `ts` block; a block fenced as ```ts fragment is a variation of
 * the example before it and is not run on its own). An example promises output with comments of the form
 * `// prints: <text>`; the runner checks that the lines it prints contain each promise, in order.
 */
import { builtinModules } from 'node:module';
import { firstUnkept, readmeParts } from '../../../tooling/scripts/release/readme-parts.mjs';

export { firstUnkept };

export interface ReadmeExample {
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  /** The texts promised by `// prints: …` comments, in order. */
  prints: string[];
  /** The packages the example imports (node built-ins left out). */
  imports: string[];
}

export interface Readme {
  /** Packages named by the install line, or null when the README has none. */
  install: string[] | null;
  examples: ReadmeExample[];
  fragments: number;
}

/** The package part of an import specifier: `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
export function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

const BUILTINS = new Set(builtinModules);
function isBuiltin(specifier: string): boolean {
  return specifier.startsWith('node:') || BUILTINS.has(specifier);
}

/** Static `import … from '…'` and side-effect `import '…'` specifiers. */
export function importsOf(code: string): string[] {
  const found = new Set<string>();
  for (const match of code.matchAll(/^\s*import\s+(?:[^'";]+?\s+from\s+)?['"]([^'"]+)['"]/gm)) {
    const specifier = match[1]!;
    if (!isBuiltin(specifier)) found.add(packageOf(specifier));
  }
  return [...found];
}

export function parseReadme(markdown: string): Readme {
  const { install, examples, fragments } = readmeParts(markdown);
  return {
    install: install.length > 0 ? install : null,
    examples: examples.map((example) => ({ ...example, imports: importsOf(example.code) })),
    fragments,
  };
}

/** The examples' imports that the install line does not name (a pasted example would fail on them). */
export function missingFromInstall(readme: Readme): string[] {
  const installed = new Set((readme.install ?? []).map((spec) => packageOf(spec.replace(/(.)@[^/]*$/, '$1'))));
  return [...new Set(readme.examples.flatMap((e) => e.imports))].filter((name) => !installed.has(name));
}

/** Routes an example declares (`app.get('/path', …)`, `router.post(…)`, typed or not), in order. */
export function declaredRoutes(code: string): string[] {
  const routes: string[] = [];
  for (const match of code.matchAll(/\b(?:app|router)\.(?:get|head|post|put|patch|delete|all)(?:<[^>]*>)?\(\s*['"`]([^'"`]+)['"`]/g)) {
    routes.push(match[1]!);
  }
  return routes;
}

/**
 * The routes an example declares but never requests: a route counts as requested when the static start of
 * its path (up to its first parameter) appears in the example once more besides its declaration.
 */
export function unrequestedRoutes(code: string): string[] {
  return declaredRoutes(code).filter((route) => {
    const prefix = route.split(/[:*]/)[0]!;
    return code.split(prefix).length - 1 < 2;
  });
}
