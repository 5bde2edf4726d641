import { GUIDE } from '../../test/fixtures/chunking.fixtures';
import { markdownHeadings } from './headings.parser';
import { markdownChunkSpans } from './markdown.chunker';

describe('markdownChunkSpans', () => {
  const headings = markdownHeadings(GUIDE);

  it.each([1, 2, 3, 4])(
    'never lets a chunk or its overlap span a heading of level <= %i',
    (headingLevel) => {
      const spans = markdownChunkSpans(GUIDE, { size: 200, overlap: 80, headingLevel }, headings);
      const bounds = headings.filter((h) => h.level <= headingLevel).map((h) => h.start);
      for (const span of spans) {
        for (const bound of bounds) expect(bound > span.start && bound < span.end).toBe(false);
      }
      // Every section boundary starts a chunk.
      for (const bound of bounds) expect(spans.some((s) => s.start === bound)).toBe(true);
    },
  );

  it('keeps deeper headings inside their section and packs small sections whole', () => {
    const text = '# A\n\nalpha\n\n## B\n\nbeta\n\n### C\n\ngamma\n\n# D\n\ndelta';
    const chunks = markdownChunkSpans(
      text,
      { size: 1000, overlap: 0, headingLevel: 1 },
      markdownHeadings(text),
    );
    expect(chunks.map((s) => text.slice(s.start, s.end))).toEqual([
      '# A\n\nalpha\n\n## B\n\nbeta\n\n### C\n\ngamma',
      '# D\n\ndelta',
    ]);
  });

  it('chunks a section longer than the size with overlap inside it', () => {
    const body = 'Line of the section body. '.repeat(20);
    const text = `# Long\n\n${body}\n\n# Next\n\nshort`;
    const spans = markdownChunkSpans(
      text,
      { size: 120, overlap: 40, headingLevel: 1 },
      markdownHeadings(text),
    );
    const next = text.indexOf('# Next');
    const inLong = spans.filter((s) => s.end <= next);
    expect(inLong.length).toBeGreaterThan(3);
    expect(inLong.some((s, i) => i > 0 && s.start < inLong[i - 1]!.end)).toBe(true);
    expect(spans[spans.length - 1]!.start).toBe(next);
  });

  it('is one recursive section when there are no headings (code, CSV)', () => {
    const text = 'def f():\n    # a comment\n    return 1\n';
    expect(markdownChunkSpans(text, { size: 100, overlap: 0, headingLevel: 3 }, [])).toEqual([
      { start: 0, end: text.trimEnd().length },
    ]);
  });
});
