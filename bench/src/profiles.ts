/**
 * Hand-written profile notes (`bench/profiles/*.md`: top frames before and after a change, how they
 * were taken) carried into the generated BENCHMARKS.md, so regenerating it keeps them.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ProfileNote {
  file: string;
  markdown: string;
}

export function readProfileNotes(dir: string): ProfileNote[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((file) => ({ file, markdown: readFileSync(join(dir, file), 'utf8') }));
}

/** The notes under one `## Profiles` section: each note's headings two levels down, its file named. */
export function renderProfileNotes(notes: readonly ProfileNote[]): string[] {
  if (!notes.length) return [];
  const out = ['## Profiles', '', 'Copied from `bench/profiles/*.md` when this file is generated.', ''];
  for (const note of notes) {
    let fence = false;
    const body = note.markdown
      .trimEnd()
      .split('\n')
      .map((line) => {
        if (line.startsWith('```')) fence = !fence;
        return !fence && /^#{1,4} /.test(line) ? `##${line}` : line;
      });
    out.push(...body, '', `<sub>From \`bench/profiles/${note.file}\`.</sub>`, '');
  }
  return out;
}
