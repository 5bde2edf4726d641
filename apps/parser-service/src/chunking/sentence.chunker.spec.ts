import { sentenceChunkSpans } from './sentence.chunker';
import { sentenceSpans } from './sentence.segmenter';

const texts = (text: string, spans: Array<{ start: number; end: number }>): string[] =>
  spans.map((s) => text.slice(s.start, s.end));

describe('sentenceSpans', () => {
  it('splits with Intl.Segmenter but not after abbreviations or initials', () => {
    const text =
      'Dr. Smith met Mr. J. Jones on Jan. 5 in St. Louis. They argued, e.g. about budgets, vs. taxes. Fine!';
    expect(texts(text, sentenceSpans(text)).map((s) => s.trim())).toEqual([
      'Dr. Smith met Mr. J. Jones on Jan. 5 in St. Louis.',
      'They argued, e.g. about budgets, vs. taxes.',
      'Fine!',
    ]);
  });

  it('splits CJK sentences without spaces and keeps the pieces contiguous', () => {
    const text = '日本語の文です。次の文！三つ目？ Done.';
    const spans = sentenceSpans(text);
    expect(texts(text, spans).map((s) => s.trim())).toEqual([
      '日本語の文です。',
      '次の文！',
      '三つ目？',
      'Done.',
    ]);
    expect(spans[0]!.start).toBe(0);
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.start).toBe(spans[i - 1]!.end);
    expect(spans[spans.length - 1]!.end).toBe(text.length);
  });

  it('ends a sentence at a line break even after an abbreviation', () => {
    const text = 'Ask the Dr.\n\nNext paragraph.';
    expect(
      texts(text, sentenceSpans(text))
        .map((s) => s.trim())
        .filter(Boolean),
    ).toEqual(['Ask the Dr.', 'Next paragraph.']);
  });
});

describe('sentenceChunkSpans', () => {
  const sentences = Array.from({ length: 12 }, (_, i) => `Sentence number ${i} is here${'.'}`);
  const text = sentences.join(' ');

  it('packs whole sentences up to the size', () => {
    const chunks = texts(text, sentenceChunkSpans(text, { size: 80, overlap: 0 }));
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(80);
      expect(chunk).toMatch(/^Sentence number \d+ is here\.( Sentence number \d+ is here\.)*$/);
    }
  });

  it('overlaps by whole trailing sentences within the character budget', () => {
    const chunks = texts(text, sentenceChunkSpans(text, { size: 100, overlap: 40 }));
    for (let i = 1; i < chunks.length; i++) {
      const firstOfNext = chunks[i]!.split(/(?<=\.) /)[0]!;
      const lastOfPrevious = chunks[i - 1]!.split(/(?<=\.) /).pop()!;
      expect(firstOfNext).toBe(lastOfPrevious);
    }
  });

  it('cuts a sentence longer than the size at words, and never starts an overlap inside it', () => {
    const long = `Short one. ${'word '.repeat(60).trim()} end. Tail sentence.`;
    const chunks = texts(long, sentenceChunkSpans(long, { size: 100, overlap: 50 }));
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(100);
    expect(chunks.filter((c) => c.startsWith('word')).length).toBeGreaterThan(1);
    // Parts of the long sentence are never repeated: they are not whole sentences.
    const words = chunks.join(' ').match(/word/g)!.length;
    expect(words).toBe(60);
  });
});
