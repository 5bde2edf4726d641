import { markdownHeadings } from './headings.parser';
import { paragraphChunkSpans } from './paragraph.chunker';

const texts = (text: string, spans: Array<{ start: number; end: number }>): string[] =>
  spans.map((s) => text.slice(s.start, s.end));

describe('paragraphChunkSpans', () => {
  it('packs whole paragraphs up to the size without overlap', () => {
    const text = [
      'First paragraph here.',
      'Second one.',
      'Third paragraph is a bit longer.',
      'Fourth.',
    ].join('\n \n');
    expect(texts(text, paragraphChunkSpans(text, { size: 45 }))).toEqual([
      'First paragraph here.\n \nSecond one.',
      'Third paragraph is a bit longer.\n \nFourth.',
    ]);
  });

  it('chunks a paragraph longer than the size on its own, by sentences', () => {
    const long = 'This sentence is long enough. '.repeat(5).trim();
    const text = `Before.\n\n${long}\n\nAfter.`;
    expect(texts(text, paragraphChunkSpans(text, { size: 70 }))).toEqual([
      'Before.',
      'This sentence is long enough. This sentence is long enough.',
      'This sentence is long enough. This sentence is long enough.',
      'This sentence is long enough.',
      'After.',
    ]);
  });

  it('starts a new chunk at a heading, so a heading stays with its section', () => {
    const text = 'Intro text.\n\n## Section\n\nBody of the section.\n\nMore body.';
    expect(texts(text, paragraphChunkSpans(text, { size: 200 }, markdownHeadings(text)))).toEqual([
      'Intro text.',
      '## Section\n\nBody of the section.\n\nMore body.',
    ]);
  });
});
