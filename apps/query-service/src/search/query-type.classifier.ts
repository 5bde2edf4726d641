import { type LexicalConstraint, parseLexicalQuery } from '@kb/lexical-index';

/**
 * What kind of query a search is, guessed from its text alone (no model, no index statistics), so
 * that `mode: auto` can lean the hybrid fusion toward the strategy that suits it (docs/adr/0022).
 *
 * - `phrase`: a quoted span ("…", “…”): the words are meant together, exactly;
 * - `boolean`: operators of the lexical query language (AND, OR, NOT, -term, +term; see
 *   @kb/lexical-index's parser), which only the lexical side can honour;
 * - `error`: an error code or message (ORA-00942, E1234, ECONNREFUSED, TypeError, "error: …");
 * - `identifier`: code names (snake_case, SCREAMING_CASE, camelCase, PascalCase, dotted.names, f());
 * - `question`: a natural-language question (a question word first, or a question mark);
 * - `keywords`: anything else, a few words.
 *
 * The first three are exact strings that embeddings blur (an embedding of `kb_search_results` is
 * close to that of any text about searching), so they lean lexical; questions lean semantic
 * (paraphrases share few words with the passages that answer them).
 */
export const QUERY_TYPES = [
  'phrase',
  'boolean',
  'error',
  'identifier',
  'question',
  'keywords',
] as const;
export type QueryType = (typeof QUERY_TYPES)[number];

// Double quotes only: single ones are too often apostrophes ("the user's id").
const QUOTED = /"[^"]+"|“[^”]+”/;

const ERROR_PATTERNS: RegExp[] = [
  // ORA-00942, HTTP-503, KB-12
  /\b[A-Z]{2,}-\d{2,}\b/,
  // E1234, TS2345, CS0246
  /\b[A-Z]{1,4}\d{3,}\b/,
  // POSIX errno names as Node reports them
  /\bE(?:CONNREFUSED|CONNRESET|CONNABORTED|NOENT|ACCES|PERM|TIMEDOUT|ADDRINUSE|PIPE|NOTFOUND|EXIST|NOTDIR|ISDIR|MFILE|AGAIN)\b/,
  // TypeError, NullPointerException, DomainError
  /\b[A-Z][A-Za-z]*(?:Error|Exception)\b/,
  // "error: …", "fatal: …", "exception: …"
  /\b(?:error|fatal|exception|panic|traceback)\b\s*:/i,
  // 0xC0000005
  /\b0x[0-9A-Fa-f]{4,}\b/,
];

const IDENTIFIER_PATTERNS: RegExp[] = [
  // snake_case, SCREAMING_SNAKE_CASE
  /\b[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+\b/,
  // camelCase
  /\b[a-z]+[A-Z][A-Za-z0-9]*\b/,
  // PascalCase with two humps or more: SearchService, HTTPClient
  /\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b/,
  // dotted.names (each part two characters or more, so "e.g." is not one)
  /\b[A-Za-z_][A-Za-z0-9_]+(?:\.[A-Za-z_][A-Za-z0-9_]+)+\b/,
  // call()
  /\b[A-Za-z_][A-Za-z0-9_]*\(\)/,
];

const QUESTION_WORDS = new Set([
  'what',
  'how',
  'why',
  'when',
  'where',
  'who',
  'whom',
  'whose',
  'which',
  'can',
  'could',
  'should',
  'would',
  'does',
  'do',
  'did',
  'is',
  'are',
  'was',
  'were',
  'will',
  'explain',
  'describe',
]);

/** Whether the parsed query has a boolean operator (AND, OR, NOT, -term, +term). */
function hasOperators(constraint: LexicalConstraint | null): boolean {
  if (!constraint) return false;
  switch (constraint.kind) {
    case 'and':
    case 'not':
      return true;
    case 'or':
      return constraint.items.some((item) => item.kind !== 'word') || constraint.items.length > 1;
    default:
      return false;
  }
}

/**
 * The query's type; the first of phrase, boolean, error, identifier, question that applies, else
 * keywords.
 */
export function classifyQuery(query: string): QueryType {
  const text = query.trim();
  if (QUOTED.test(text)) return 'phrase';
  const parsed = parseLexicalQuery(text);
  if (parsed.syntax === 'structured' && hasOperators(parsed.constraint)) return 'boolean';
  if (ERROR_PATTERNS.some((p) => p.test(text))) return 'error';
  if (IDENTIFIER_PATTERNS.some((p) => p.test(text))) return 'identifier';
  const first =
    text
      .split(/\s+/)[0]
      ?.toLowerCase()
      .replace(/[^a-z]/g, '') ?? '';
  if (text.endsWith('?') || QUESTION_WORDS.has(first)) return 'question';
  return 'keywords';
}

/** α for exact-string queries: lexical carries 70 % of the fused score. */
export const LEXICAL_LEANING_WEIGHT = 0.3;
/** α for questions: semantic carries 85 %, at least the deployment's own α. */
export const SEMANTIC_LEANING_WEIGHT = 0.85;

/**
 * The convex combination's α (semantic share) for a query type under `mode: auto`; `keywords`
 * keeps the deployment's α (HYBRID_SEMANTIC_WEIGHT).
 */
export function semanticWeightFor(type: QueryType, deploymentWeight: number): number {
  switch (type) {
    case 'phrase':
    case 'boolean':
    case 'error':
    case 'identifier':
      return Math.min(deploymentWeight, LEXICAL_LEANING_WEIGHT);
    case 'question':
      return Math.max(deploymentWeight, SEMANTIC_LEANING_WEIGHT);
    case 'keywords':
      return deploymentWeight;
  }
}
