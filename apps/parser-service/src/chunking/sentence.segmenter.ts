import { segmentSpans } from './segments.util';
import type { Span } from './spans.util';

// A fixed locale keeps chunking deterministic across machines; ICU's sentence rules are the same
// for every script (。！？ end CJK sentences too).
const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Words after which a period does not end a sentence, though ICU's rules say it does ("Dr. Smith",
 * "Jan. 5", "Fig. 3"), lower-cased without the period. Single capital initials ("J. R. Smith") too.
 */
const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'mt',
  'rev',
  'gen',
  'col',
  'capt',
  'lt',
  'sgt',
  'hon',
  'vs',
  'etc',
  'cf',
  'fig',
  'figs',
  'eq',
  'vol',
  'pp',
  'ch',
  'approx',
  'inc',
  'ltd',
  'co',
  'corp',
  'dept',
  'univ',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
  'e.g',
  'i.e',
]);

function endsWithAbbreviation(text: string, sentence: Span): boolean {
  // Only when the sentence ends on the same line: a line break after the period ends it anyway.
  let end = sentence.end;
  while (end > sentence.start && ' \t\u00a0'.includes(text[end - 1]!)) end--;
  if (end === sentence.start || text[end - 1] !== '.') return false;
  let start = end - 1;
  while (start > sentence.start && !/\s/.test(text[start - 1]!)) start--;
  const word = text.slice(start, end - 1).replace(/^[("'\u201c\u2018[]+/, '');
  return /^[A-Z]$/.test(word) || ABBREVIATIONS.has(word.toLowerCase());
}

/**
 * The sentences of `text` within `span` as contiguous pieces that cover it, trailing whitespace
 * kept with its sentence. Sentence boundaries come from `Intl.Segmenter`; one after a known
 * abbreviation or an initial is undone.
 */
export function sentenceSpans(text: string, span: Span = { start: 0, end: text.length }): Span[] {
  const spans: Span[] = [];
  let pending: Span | undefined;
  for (const sentence of segmentSpans(segmenter, text, span)) {
    pending = pending ? { start: pending.start, end: sentence.end } : sentence;
    if (!endsWithAbbreviation(text, sentence)) {
      spans.push(pending);
      pending = undefined;
    }
  }
  if (pending) spans.push(pending);
  return spans;
}
