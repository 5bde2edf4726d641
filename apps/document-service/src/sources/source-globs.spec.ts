import { selects } from './source-globs';

describe('source globs', () => {
  it('takes every file without include globs, and drops the excluded', () => {
    const source = { include: [], exclude: ['drafts/**', '*.tmp'] };
    expect(selects(source, 'guide.md')).toBe(true);
    expect(selects(source, 'drafts/x.md')).toBe(false);
    expect(selects(source, 'deep/a.tmp')).toBe(false);
  });

  it('takes only what an include glob matches, across folders with **', () => {
    const source = { include: ['**/*.md', 'notes/*.txt'], exclude: [] };
    expect(selects(source, 'a/b/c.md')).toBe(true);
    expect(selects(source, 'notes/n.txt')).toBe(true);
    expect(selects(source, 'notes/deeper/n.txt')).toBe(false);
    expect(selects(source, 'photo.png')).toBe(false);
  });
});
