/** Words a model token stands for, about, in English prose (WordPiece): sizes a window in words. */
const TOKENS_PER_WORD = 1.3;
const MIN_TERM_LENGTH = 3;

/**
 * The part of a passage the cross-encoder reads (docs/adr/0047): the window of the words that fit
 * in `maxTokens` (less the query's) holding the most distinct query terms, the earliest among
 * equals. The model truncates what is longer anyway, at the end: a passage whose relevant part
 * is in the middle would be judged on its start.
 */
export function bestWindow(passage: string, query: string, maxTokens: number): string {
  const words = passage.split(/\s+/).filter((w) => w.length > 0);
  const queryWords = query.split(/\s+/).length;
  const size = Math.max(16, Math.floor(maxTokens / TOKENS_PER_WORD) - queryWords - 3);
  if (words.length <= size) return passage;
  const terms = termsOf(query);
  if (terms.size === 0) return words.slice(0, size).join(' ');
  const keys = words.map(normalise);
  // Occurrences of each query term inside the window, slid one word at a time.
  const inWindow = new Map<string, number>();
  let distinct = 0;
  const enter = (key: string) => {
    if (!terms.has(key)) return;
    const n = (inWindow.get(key) ?? 0) + 1;
    inWindow.set(key, n);
    if (n === 1) distinct += 1;
  };
  const leave = (key: string) => {
    if (!terms.has(key)) return;
    const n = inWindow.get(key)! - 1;
    inWindow.set(key, n);
    if (n === 0) distinct -= 1;
  };
  for (let i = 0; i < size; i++) enter(keys[i]!);
  let best = 0;
  let bestDistinct = distinct;
  for (let start = 1; start + size <= keys.length; start++) {
    leave(keys[start - 1]!);
    enter(keys[start + size - 1]!);
    if (distinct > bestDistinct) {
      best = start;
      bestDistinct = distinct;
    }
  }
  return words.slice(best, best + size).join(' ');
}

function termsOf(query: string): Set<string> {
  return new Set(
    query
      .split(/\s+/)
      .map(normalise)
      .filter((t) => t.length >= MIN_TERM_LENGTH),
  );
}

/** Lower case, without the punctuation around a word. */
function normalise(word: string): string {
  return word.toLowerCase().replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
}
