import { GUIDE, GUIDE_SECTIONS } from '../../test/fixtures/chunking.fixtures';
import { HeadingPaths, markdownHeadings } from './headings.parser';

describe('markdownHeadings', () => {
  it('reads ATX headings with their level and line start, skipping fenced code and non-headings', () => {
    const headings = markdownHeadings(GUIDE);
    expect(headings.map((h) => [h.level, h.text])).toEqual([
      [1, 'Guide'],
      [2, 'Install'],
      [3, 'Linux'],
      [4, 'Troubleshooting'],
      [2, 'Usage'],
      [1, 'Appendix'],
    ]);
    for (const heading of headings) {
      expect(GUIDE.slice(heading.start)).toMatch(/^#{1,6} /);
      expect(GUIDE[heading.start - 1]).toBe('\n');
    }
  });

  it('handles CRLF, up to three spaces of indent, closing runs, tildes and longer fences', () => {
    const text = [
      '   ## Indented ##  ',
      '    # four spaces is code',
      '~~~~',
      '# inside tildes',
      '~~~',
      '# still inside: the closing fence is shorter',
      '~~~~',
      '# C#',
      '#',
      '# # ',
    ].join('\r\n');
    expect(markdownHeadings(text).map((h) => [h.level, h.text, h.start])).toEqual([
      [2, 'Indented', 0],
      [1, 'C#', text.indexOf('# C#')],
    ]);
  });

  it('reads what the HTML and DOCX extractors write: `#` lines between blank lines', () => {
    expect(
      markdownHeadings('Intro\n\n# Title\n\nText\n\n### Deep\n\nMore').map((h) => h.text),
    ).toEqual(['Title', 'Deep']);
  });
});

describe('HeadingPaths', () => {
  const paths = new HeadingPaths(markdownHeadings(GUIDE));

  it('gives the path in force from the start of each heading line on, outermost first', () => {
    expect(paths.at(0)).toEqual([]);
    for (const { line, path } of GUIDE_SECTIONS) {
      const start = GUIDE.indexOf(`\n${line}\n`) + 1;
      expect(paths.at(start - 1)).not.toEqual(path);
      expect(paths.at(start)).toEqual(path);
      expect(paths.at(start + line.length + 2)).toEqual(path);
    }
    expect(paths.at(GUIDE.length)).toEqual(['Appendix']);
  });

  it('is empty for text without headings', () => {
    expect(new HeadingPaths([]).at(10)).toEqual([]);
  });
});
