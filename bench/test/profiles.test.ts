import { describe, expect, it } from 'vitest';
import { renderProfileNotes } from '../src/profiles.js';

describe('profile notes in BENCHMARKS.md', () => {
  it('puts each note under ## Profiles, headings two levels down, code blocks untouched', () => {
    const md = renderProfileNotes([{ file: 'core.md', markdown: '# Core\n\n## Before\n\n```\n# not a heading\n```\n' }]);
    expect(md.join('\n')).toBe(
      [
        '## Profiles',
        '',
        'Copied from `bench/profiles/*.md` when this file is generated.',
        '',
        '### Core',
        '',
        '#### Before',
        '',
        '```',
        '# not a heading',
        '```',
        '',
        '<sub>From `bench/profiles/core.md`.</sub>',
        '',
      ].join('\n'),
    );
    expect(renderProfileNotes([])).toEqual([]);
  });
});
