// Every README example against the packed tarballs, the way a strict TypeScript user's project meets it: a
// scratch project with the tarballs, each README's install line (today's majors), the typings a TypeScript
// user adds (@types/node, @types/express, @types/koa, and tsx to run TypeScript on Node 20) and nothing
// optional (no @opentelemetry/api: our declarations must not need it).
// - type-checked as an ES module (`.mts`, as pasted) and as a CommonJS program (`.cts`: the same imports, the
//   body inside an async function), with `skipLibCheck: false`, by TypeScript 5.9 and by TypeScript 7;
// - run on each Node given (Node >= 22.18 runs TypeScript itself; older ones through tsx), printing what its
//   `// prints:` comments promise.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstUnkept, installLine, readmeExamples } from './readme-parts.mjs';
import { runCommand } from './run-command.mjs';

export { firstUnkept, installLine, readmeExamples } from './readme-parts.mjs';

/** The compilers every example must satisfy: the alias installed in the scratch project → its npm range. */
export const TYPESCRIPTS = { 'typescript-5.9': '~5.9.3', 'typescript-7': '^7.0.0' };
/** Typings a TypeScript user of the examples' frameworks installs beside the README's install line. */
const TYPINGS = ['@types/node', '@types/express', '@types/koa', 'tsx'];
const OURS = /^@flight\//;

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

/** Installs the scratch project and writes each example as `src/<readme>-<line>.mts` and `.cts`. */
function prepare(dir, packages, readmes, npm) {
  const problems = [];
  const ours = new Set(packages.map((p) => p.name));
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
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch-examples', private: true, type: 'module' }));
  const compilers = Object.entries(TYPESCRIPTS).map(([alias, range]) => `${alias}@npm:typescript@${range}`);
  const install = runCommand(
    dir,
    npm[0],
    [...npm.slice(1), 'install', '--no-audit', '--no-fund', '--loglevel=error', ...packages.map((p) => p.tarball), ...theirs, ...compilers],
    { timeoutMs: 600_000 },
  );
  if (!install.ok)
    return {
      problems: [`npm install of the README examples' project failed:\n${install.output}`],
      examples: [],
      optional,
      majors: new Set(),
    };
  const tree = runCommand(dir, npm[0], [...npm.slice(1), 'ls', '--all'], { timeoutMs: 600_000 });
  if (!tree.ok) problems.push(`npm ls reports an invalid tree:\n${tree.output}`);
  const majors = new Set();
  for (const name of theirs) {
    const manifest = join(dir, 'node_modules', name, 'package.json');
    if (existsSync(manifest)) majors.add(`${name}@${JSON.parse(readFileSync(manifest, 'utf8')).version.split('.')[0]}`);
  }
  for (const name of optional) if (existsSync(join(dir, 'node_modules', name))) problems.push(`${name} (an optional peer) was installed`);
  mkdirSync(join(dir, 'src'));
  const examples = [];
  for (const { name, markdown } of readmes) {
    for (const { line, code, prints } of readmeExamples(markdown)) {
      const file = `${name.replace(/\W+/g, '-')}-${line}`;
      writeFileSync(join(dir, 'src', `${file}.mts`), code);
      writeFileSync(join(dir, 'src', `${file}.cts`), asCommonJs(code));
      examples.push({ file, where: `${name}/README.md:${line}`, prints });
    }
  }
  return { problems, examples, optional, majors };
}

/** Type-checks `src/*.mts` and `src/*.cts` with each TypeScript of TYPESCRIPTS: `{ problems, versions, elsewhere }`. */
function typeCheck(dir) {
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
  const problems = [];
  const versions = [];
  const elsewhere = new Set();
  for (const alias of Object.keys(TYPESCRIPTS)) {
    const { version } = JSON.parse(readFileSync(join(dir, 'node_modules', alias, 'package.json'), 'utf8'));
    versions.push(`TypeScript ${version}`);
    const tsc = runCommand(dir, process.execPath, [join(dir, 'node_modules', alias, 'bin', 'tsc'), '-p', dir], { timeoutMs: 600_000 });
    const { ours, theirs } = errorsByOwner(tsc.output);
    theirs.forEach((error) => elsewhere.add(error.split('(')[0]));
    if (ours.length > 0 || (!tsc.ok && theirs.length === 0))
      problems.push(`TypeScript ${version} rejects the README examples (skipLibCheck false):\n${ours.join('\n') || tsc.output}`);
  }
  return { problems, versions, elsewhere };
}

/** Runs each example (`.mts`) with each of `nodes` ([label, command…]) under `env`: the problems. */
function runAll(dir, examples, nodes, env) {
  const problems = [];
  for (const [label, ...command] of nodes) {
    for (const { file, where, prints } of examples) {
      const result = runCommand(dir, command[0], [...command.slice(1), join('src', `${file}.mts`)], {
        env: { ...process.env, ...env },
        timeoutMs: 60_000,
      });
      const unkept = firstUnkept(prints, result.output);
      if (!result.ok) problems.push(`${where} failed on ${label}:\n${result.output}`);
      else if (unkept !== undefined) problems.push(`${where} on ${label} did not print "${unkept}":\n${result.output}`);
    }
  }
  return problems;
}

/**
 * `{ problems, summary }` after checking the examples of `readmes` ([{ name, markdown }]) against `packages`
 * ([{ name, tarball, manifest }]), installed by `npm` (`[command, …args]`; see `npmOn`: npm picks what its
 * Node runs): type-checked, then run with each of `nodes` ([label, command…]; none: type-checked only) with
 * `env` (REDIS_URL, OPENAI_BASE_URL, …).
 */
export function checkExamples(packages, readmes, { npm = ['npm'], nodes = [], env = {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'flight-examples-'));
  try {
    const prepared = prepare(dir, packages, readmes, npm);
    if (prepared.examples.length === 0) return { problems: prepared.problems, summary: '' };
    const types = typeCheck(dir);
    const ran = runAll(dir, prepared.examples, nodes, env);
    const others = types.elsewhere.size > 0 ? `; errors in other packages' own typings, not ours: ${[...types.elsewhere].join(', ')}` : '';
    const runs = nodes.length > 0 ? `; each runs and prints what it promises on ${nodes.map(([label]) => label).join(', ')}` : '';
    const summary = `with ${[...prepared.majors].filter((m) => !m.startsWith('@types/') && !m.startsWith('tsx@')).join(', ')}: ${prepared.examples.length} README examples type-check as ESM and as CommonJS with ${types.versions.join(' and ')}, skipLibCheck false, without ${[...prepared.optional].join(', ')}${runs}; npm ls valid${others}`;
    return { problems: [...prepared.problems, ...types.problems, ...ran], summary };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
