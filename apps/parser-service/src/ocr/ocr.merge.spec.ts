import type { Extracted } from '../parsing/extraction.model';
import { mergeOcr } from './ocr.merge';

const pdf = (pages: string[]): Extracted => {
  let text = '';
  const placed: NonNullable<Extracted['pages']> = [];
  pages.forEach((page, index) => {
    if (text) text += '\n\n';
    placed.push({ page: index + 1, start: text.length, end: text.length + page.length });
    text += page;
  });
  return { text, format: 'pdf', pages: placed };
};
const options = { minConfidence: 60, languages: ['eng'] };
const slice = (extracted: Extracted, page: number) => {
  const found = extracted.pages!.find((candidate) => candidate.page === page)!;
  return extracted.text.slice(found.start, found.end);
};

describe('mergeOcr', () => {
  it('puts each page read into its slot and moves the later pages', () => {
    const merged = mergeOcr(
      pdf(['first page', '', 'third page']),
      new Map([[2, { text: 'scanned  \nsecond page\n\n\n\n', confidence: 91 }]]),
      options,
    );
    expect(slice(merged, 1)).toBe('first page');
    expect(slice(merged, 2)).toBe('scanned\nsecond page');
    expect(slice(merged, 3)).toBe('third page');
    expect(merged.ocr).toEqual({
      languages: ['eng'],
      minConfidence: 60,
      pages: [{ page: 2, confidence: 91, flagged: false, chars: 19 }],
    });
  });

  it('fills the pages of an image, separated', () => {
    const image: Extracted = {
      text: '',
      format: 'image',
      pages: [
        { page: 1, start: 0, end: 0 },
        { page: 2, start: 0, end: 0 },
      ],
    };
    const merged = mergeOcr(
      image,
      new Map([
        [1, { text: 'one', confidence: 90 }],
        [2, { text: 'two', confidence: 90 }],
      ]),
      options,
    );
    expect(merged.text).toBe('one\n\ntwo');
    expect([slice(merged, 1), slice(merged, 2)]).toEqual(['one', 'two']);
  });

  it('flags a page under the confidence threshold and leaves its text out', () => {
    const merged = mergeOcr(
      pdf(['kept text', '']),
      new Map([[2, { text: 'n0!se ~~ garb1e', confidence: 41 }]]),
      options,
    );
    expect(merged.text).not.toContain('garb1e');
    expect(slice(merged, 2)).toBe('');
    expect(merged.ocr!.pages).toEqual([{ page: 2, confidence: 41, flagged: true, chars: 15 }]);
  });
});
