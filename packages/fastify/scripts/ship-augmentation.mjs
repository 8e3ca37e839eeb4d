// Fastify's type augmentation ships as one hand-written declaration file that both the ESM and the CJS
// declarations reference (src/augmentation.d.ts says why). Run after tsup: its declaration bundler drops
// the reference.
import { copyFile, readFile, writeFile } from 'node:fs/promises';

const REFERENCE = '/// <reference path="./augmentation.d.ts" />';
await copyFile('src/augmentation.d.ts', 'dist/augmentation.d.ts');
for (const file of ['dist/index.d.ts', 'dist/index.d.cts']) {
  const text = await readFile(file, 'utf8');
  if (!text.startsWith(REFERENCE)) await writeFile(file, `${REFERENCE}\n${text}`);
}
