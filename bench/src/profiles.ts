/**
 * Hand-written profile notes (`bench/profiles/*.md`: top frames before and after a change, how they
 * were taken), listed with links at the end of the generated BENCHMARKS.md, which shows results only.
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

/** A note's title: its first heading, else its file name. */
function titleOf(note: ProfileNote): string {
  const heading = /^#{1,6} +(.+)$/m.exec(note.markdown);
  return heading ? heading[1]!.trim() : note.file;
}

/** The `## Profiles` section: one link per note, so the results above stay readable. */
export function renderProfileNotes(notes: readonly ProfileNote[]): string[] {
  if (!notes.length) return [];
  return [
    '## Profiles',
    '',
    'What each profile (`node --cpu-prof`) showed and what changed because of it, with the commands that took it:',
    '',
    ...notes.map((note) => `- [${titleOf(note)}](bench/profiles/${note.file})`),
    '',
  ];
}
