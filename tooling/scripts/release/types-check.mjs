// Type-checks every README example against the packed tarballs the way a strict TypeScript user's project
// does: a scratch project with the tarballs, each README's install line (today's majors), the typings a
// TypeScript user adds (@types/node, @types/express, @types/koa) and nothing optional (no
// @opentelemetry/api: our declarations must not need it). Each example is checked as an ES module (`.mts`,
// as pasted) and as a CommonJS program (`.cts`: the same imports, the body inside an async function), with
// `skipLibCheck: false`, by TypeScript 5.9 and by TypeScript 7.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The compilers every example must satisfy: the alias installed in the scratch project → its npm range. */
export const TYPESCRIPTS = { 'typescript-5.9': '~5.9.3', 'typescript-7': '^7.0.0' };
/** Typings a TypeScript user of the examples' frameworks installs beside the README's install line. */
const TYPINGS = ['@types/node', '@types/express', '@types/koa'];
const OURS = /^@flight\//;

/** The runnable TypeScript examples of a README (```ts blocks; ```ts fragment blocks are variations). */
export function readmeExamples(markdown) {
  const examples = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(ts|typescript)(?:[ \t]+(\S+))?\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i + 1;
    const body = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    if (open[2] !== 'fragment') examples.push({ line: start, code: body.join('\n') });
  }
  return examples;
}

/** The packages a README's install line names (the first `npm i`/`npm install` of a sh block). */
export function installLine(markdown) {
  const line = markdown.split('\n').find((l) => /^\s*npm\s+(i|install)\s/.test(l));
  return line
    ? line
        .trim()
        .split(/\s+/)
        .slice(2)
        .filter((word) => !word.startsWith('-'))
    : [];
}

/**
 * The example as a CommonJS program: its import declarations first (TypeScript turns them into `require`
 * calls in a `.cts` file), the rest inside an async function, since a CommonJS module has no top-level await.
 */
export function asCommonJs(code) {
  const lines = code.split('\n');
  const imports = [];
  const body = [];
  for (let i = 0; i < lines.length; i++) {
    if (/^import\s/.test(lines[i])) {
      const statement = [lines[i]];
      while (!/;\s*$/.test(statement.at(-1)) && i + 1 < lines.length) statement.push(lines[++i]);
      imports.push(...statement);
    } else body.push(lines[i]);
  }
  return [...imports, 'export async function main(): Promise<void> {', ...body.map((l) => `  ${l}`), '}', ''].join('\n');
}

/**
 * The compiler's errors split by where they are: in our declarations or the examples (ours), or in another
 * package's own typings (theirs: a user with `skipLibCheck: false` meets those without us too).
 */
export function errorsByOwner(output) {
  const errors = output.split('\n').filter((line) => /\(\d+,\d+\): error TS\d+/.test(line));
  const theirs = errors.filter((line) => /^node_modules\//.test(line) && !/^node_modules\/@flight\//.test(line));
  return { ours: errors.filter((line) => !theirs.includes(line)), theirs };
}

function run(cwd, cmd, args) {
  const result = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 600_000 });
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}`.trim() };
}

/**
 * `{ problems, summary }` after type-checking the examples of `readmes` ([{ name, markdown }]) against
 * `packages` ([{ name, tarball, manifest }]).
 */
export function checkTypes(packages, readmes) {
  const dir = mkdtempSync(join(tmpdir(), 'flight-types-'));
  const problems = [];
  try {
    const ours = new Map(packages.map((p) => [p.name, p]));
    const peers = packages.flatMap(({ manifest }) =>
      Object.keys(manifest.peerDependencies ?? {}).map((name) => ({
        name,
        optional: Boolean(manifest.peerDependenciesMeta?.[name]?.optional),
      })),
    );
    const required = new Set(peers.filter((p) => !p.optional).map((p) => p.name));
    const optional = new Set(peers.filter((p) => p.optional && !required.has(p.name)).map((p) => p.name));
    const theirs = new Set(TYPINGS);
    for (const { markdown } of readmes) for (const name of installLine(markdown)) if (!OURS.test(name)) theirs.add(name);
    for (const name of required) if (!ours.has(name)) theirs.add(name);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch-types', private: true, type: 'module' }));
    const compilers = Object.entries(TYPESCRIPTS).map(([alias, range]) => `${alias}@npm:typescript@${range}`);
    const install = run(dir, 'npm', [
      'install',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...packages.map((p) => p.tarball),
      ...theirs,
      ...compilers,
    ]);
    if (!install.ok) return { problems: [`npm install for the type check failed:\n${install.output}`], summary: '' };
    const tree = run(dir, 'npm', ['ls', '--all']);
    if (!tree.ok) problems.push(`npm ls reports an invalid tree:\n${tree.output}`);
    for (const name of optional) if (existsSync(join(dir, 'node_modules', name))) problems.push(`${name} (an optional peer) was installed`);

    mkdirSync(join(dir, 'src'));
    let examples = 0;
    for (const { name, markdown } of readmes) {
      for (const { line, code } of readmeExamples(markdown)) {
        const file = `${name.replace(/\W+/g, '-')}-${line}`;
        writeFileSync(join(dir, 'src', `${file}.mts`), code);
        writeFileSync(join(dir, 'src', `${file}.cts`), asCommonJs(code));
        examples++;
      }
    }
    const compilerOptions = {
      strict: true,
      module: 'nodenext',
      target: 'es2022',
      lib: ['es2023'],
      types: ['node'],
      noEmit: true,
      skipLibCheck: false,
    };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['src/*.mts', 'src/*.cts'] }));
    const versions = [];
    const elsewhere = new Set();
    for (const alias of Object.keys(TYPESCRIPTS)) {
      const manifest = JSON.parse(readFileSync(join(dir, 'node_modules', alias, 'package.json'), 'utf8'));
      versions.push(`TypeScript ${manifest.version}`);
      const tsc = run(dir, process.execPath, [join(dir, 'node_modules', alias, 'bin', 'tsc'), '-p', dir]);
      const { ours: mine, theirs: others } = errorsByOwner(tsc.output);
      others.forEach((error) => elsewhere.add(error));
      if (mine.length > 0 || (!tsc.ok && mine.length + others.length === 0))
        problems.push(`TypeScript ${manifest.version} rejects the README examples (skipLibCheck false):\n${mine.join('\n') || tsc.output}`);
    }
    const summary = `${examples} README examples type-check as ESM and as CommonJS with ${versions.join(' and ')}, skipLibCheck false, without ${[...optional].join(', ')}; npm ls valid${elsewhere.size > 0 ? `; ${elsewhere.size} error(s) in other packages' own typings (${[...elsewhere].map((e) => e.split('(')[0]).join(', ')}), not ours` : ''}`;
    return { problems, summary };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
