/**
 * A rough stand-in for Postgres' `english` text search configuration, enough for BM25 over small
 * test corpora: lower-cased words, the Snowball English stop words dropped, and plurals folded
 * ("books" finds "book"). Postgres stems further (Snowball); the fake only has to agree with itself.
 */
const STOP_WORDS = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself ' +
    'she her hers herself it its itself they them their theirs themselves what which who whom ' +
    'this that these those am is are was were be been being have has had having do does did ' +
    'doing a an the and but if or because as until while of at by for with about against ' +
    'between into through during before after above below to from up down in out on off over ' +
    'under again further then once here there when where why how all any both each few more ' +
    'most other some such no nor not only own same so than too very s t can will just don ' +
    'should now'
  ).split(' '),
);

function stem(word: string): string {
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ies')) return `${word.slice(0, -3)}i`;
  if (word.endsWith('s') && !/(ss|us|is)$/.test(word) && word.length > 3) {
    return word.slice(0, -1);
  }
  return word;
}

/** The lexemes of a text, one entry per occurrence (so counts are term frequencies). */
export function englishTerms(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0 && !STOP_WORDS.has(word))
    .map(stem);
}
