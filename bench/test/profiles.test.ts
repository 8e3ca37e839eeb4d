import { describe, expect, it } from 'vitest';
import { renderProfileNotes } from '../src/profiles.js';

describe('profile notes in BENCHMARKS.md', () => {
  it('links each note under ## Profiles by its first heading (its file name without one), never copying it', () => {
    const md = renderProfileNotes([
      { file: 'core.md', markdown: '# Core loop\n\n## Before\n\nlong diary\n' },
      { file: 'plain.md', markdown: 'no heading\n' },
    ]);
    expect(md).toEqual([
      '## Profiles',
      '',
      'What each profile (`node --cpu-prof`) showed and what changed because of it, with the commands that took it:',
      '',
      '- [Core loop](bench/profiles/core.md)',
      '- [plain.md](bench/profiles/plain.md)',
      '',
    ]);
    expect(md.join('\n')).not.toContain('long diary');
    expect(renderProfileNotes([])).toEqual([]);
  });
});
