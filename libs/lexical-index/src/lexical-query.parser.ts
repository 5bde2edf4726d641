/**
 * The lexical query language: what people type into a search box.
 *
 * - words: `sail rigging` — any of them may match; BM25 ranks by all of them;
 * - phrases: `"exact phrase"` (or “…”) — the words in this order, adjacent (after stemming);
 * - identifiers and error strings, kept whole: `ERR_CONNECTION_RESET`, `foo.bar()`, `fooBar`,
 *   `ORA-00942`, `0xC0000005`, `std::vector`. Typed among plain words they are `preferred`: a
 *   chunk that contains the string itself (case-insensitively) ranks above every chunk that only
 *   shares its parts, which BM25 still scores. Typed with syntax (`+ERR_X`, `ERR_X AND retry`,
 *   `-ERR_X`, inside an operator group or beside a top-level OR) they are required or excluded;
 * - `AND`, `OR`, `NOT` (upper case), `-term` / `-"phrase"` (exclude), `+term` (require), and
 *   parentheses.
 *
 * Juxtaposed items: phrases, `+terms`, exclusions and parenthesized or operator groups must all
 * hold; bare words are optional (at least one must match when nothing else is required), as in a
 * search engine's default OR; identifiers are preferred at the top, required inside a group.
 * `a AND b` requires both, `a OR b` either. What is left in `constraint` is syntax the person
 * typed, so the semantic side of a hybrid search is held to it too.
 *
 * Malformed syntax (an unclosed quote, an unbalanced parenthesis, an operator with nothing on one
 * side) never fails: the whole query is read as plain words, with no constraint.
 */
export type LexicalConstraint =
  | { kind: 'word'; text: string }
  | { kind: 'phrase'; text: string }
  | { kind: 'literal'; text: string }
  | { kind: 'and'; items: LexicalConstraint[] }
  | { kind: 'or'; items: LexicalConstraint[] }
  | { kind: 'not'; item: LexicalConstraint };

export interface ParsedLexicalQuery {
  /** The text whose terms BM25 scores: every word, phrase and identifier not excluded. */
  scoringText: string;
  /** What a chunk must satisfy; null for plain words (sharing any term is enough). */
  constraint: LexicalConstraint | null;
  /**
   * Identifiers typed among plain words at the top of the query: not required, but a chunk that
   * contains them whole ranks above every chunk that does not (docs/adr/0028).
   */
  preferred: string[];
  /** `plain` words, `structured` syntax, or `malformed` syntax read as plain words. */
  syntax: 'plain' | 'structured' | 'malformed';
}

type Token =
  | { t: 'word'; text: string }
  | { t: 'ident'; text: string }
  | { t: 'phrase'; text: string }
  | { t: 'and' | 'or' | 'not' | 'minus' | 'plus' | 'lparen' | 'rparen' };

class Malformed extends Error {}

const OPENING_QUOTES = new Map([
  ['"', '"'],
  ['“', '”'],
]);

/**
 * Identifiers and error strings: kept whole. The same shapes as query-service's query-type
 * classifier (docs/adr/0022), matched against a whole token.
 */
const IDENTIFIER_SHAPES: RegExp[] = [
  // snake_case, SCREAMING_SNAKE_CASE, __dunder__
  /^_*[A-Za-z0-9]+(?:_+[A-Za-z0-9]+)+_*$/,
  // camelCase
  /^[a-z]+[A-Z][A-Za-z0-9]*$/,
  // PascalCase with two humps or more: SearchService, HTTPClient
  /^[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*$/,
  // dotted.names (each part two characters or more, so "e.g." and "U.S." are not), a call, a path
  /^[A-Za-z_$][\w$]+(?:(?:\.|::|->|#)[A-Za-z_$][\w$]+)+(?:\(\))?$/,
  // call(), call(x)
  /^[A-Za-z_$][\w$.]*\([^()\s]*\)$/,
  // ORA-00942, HTTP-503, KB-12
  /^[A-Z]{2,}-\d{2,}$/,
  // E1234, TS2345
  /^[A-Z]{1,4}\d{3,}$/,
  // 0xC0000005
  /^0x[0-9A-Fa-f]{4,}$/,
];

/** Trailing sentence punctuation is not part of a token ("see foo.bar()." ends with a period). */
const TRAILING_PUNCTUATION = /[.,;:!?]+$/;

export function isIdentifier(token: string): boolean {
  return IDENTIFIER_SHAPES.some((shape) => shape.test(token));
}

function tokenize(query: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < query.length) {
    const ch = query[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const closing = OPENING_QUOTES.get(ch);
    if (closing !== undefined) {
      const end = query.indexOf(closing, i + 1);
      if (end === -1) throw new Malformed('unclosed quote');
      const text = query.slice(i + 1, end).trim();
      if (text) tokens.push({ t: 'phrase', text });
      i = end + 1;
      continue;
    }
    if (ch === '”') throw new Malformed('closing quote without an opening one');
    let end = i;
    while (end < query.length && !/[\s"“”]/.test(query[end]!)) end++;
    let run = query.slice(i, end);
    i = end;
    // A sign before a word, a parenthesis or a quote: exclude / require. A lone "-" or a "--"
    // is punctuation, `--user` a command-line flag and `-5` a number, none an exclusion.
    if (/^[-+][\p{L}_(]/u.test(run) || (/^[-+]$/.test(run) && OPENING_QUOTES.has(query[i] ?? ''))) {
      tokens.push({ t: run.startsWith('-') ? 'minus' : 'plus' });
      run = run.slice(1);
      if (!run) continue;
    }
    while (run.startsWith('(')) {
      tokens.push({ t: 'lparen' });
      run = run.slice(1);
    }
    let closers = 0;
    while (
      run.endsWith(')') &&
      !(run.endsWith('()') && run.length > 2) &&
      !/\([^()]*\)$/.test(run)
    ) {
      closers++;
      run = run.slice(0, -1);
    }
    if (run) {
      if (run === 'AND' || run === 'OR' || run === 'NOT') {
        tokens.push({ t: run.toLowerCase() as 'and' | 'or' | 'not' });
      } else {
        const bare = run.replace(TRAILING_PUNCTUATION, '');
        if (bare && isIdentifier(bare)) tokens.push({ t: 'ident', text: bare });
        else tokens.push({ t: 'word', text: run });
      }
    }
    for (; closers > 0; closers--) tokens.push({ t: 'rparen' });
  }
  return tokens;
}

/** A parsed item, and whether it is a bare word (optional among juxtaposed items). */
interface Item {
  constraint: LexicalConstraint;
  optional: boolean;
  /** A bare identifier among juxtaposed items: preferred at the top of the query. */
  identifier?: string;
}

class Parser {
  private at = 0;
  private negations = 0;
  /** The texts of every word, phrase and identifier met outside a NOT: what BM25 scores. */
  readonly positive: string[] = [];
  /** The identifiers preferred rather than required (see `ParsedLexicalQuery.preferred`). */
  readonly preferred: string[] = [];
  private depth = 0;
  /** Whether the top level is one sequence: beside a top-level OR, an identifier is an operand. */
  private readonly oneTopSequence: boolean;

  constructor(private readonly tokens: Token[]) {
    let depth = 0;
    let topOr = false;
    for (const token of tokens) {
      if (token.t === 'lparen') depth++;
      else if (token.t === 'rparen') depth--;
      else if (token.t === 'or' && depth === 0) topOr = true;
    }
    this.oneTopSequence = !topOr;
  }

  parse(): LexicalConstraint | null {
    const result = this.orExpr();
    if (this.at < this.tokens.length) throw new Malformed('unexpected token');
    return result;
  }

  private peek(): Token | undefined {
    return this.tokens[this.at];
  }

  private orExpr(): LexicalConstraint | null {
    const first = this.sequence();
    if (this.peek()?.t !== 'or') return first;
    // Only a lone top-level sequence prefers identifiers and can leave nothing required.
    const items = [first!];
    while (this.peek()?.t === 'or') {
      this.at++;
      items.push(this.sequence()!);
    }
    return { kind: 'or', items };
  }

  /**
   * Juxtaposed and AND-ed items up to OR, `)` or the end. Null only for the query's lone top-level
   * sequence when its identifiers are preferred and nothing else is required.
   */
  private sequence(): LexicalConstraint | null {
    let items: Item[] = [];
    for (;;) {
      const next = this.peek();
      if (!next || next.t === 'or' || next.t === 'rparen') break;
      if (next.t === 'and') {
        if (items.length === 0) throw new Malformed('AND with nothing before it');
        this.at++;
        const right = this.unary();
        const left = items.pop()!;
        // The operands of AND are required, identifiers included.
        items.push({ constraint: and([left.constraint, right.constraint]), optional: false });
        continue;
      }
      items.push(this.unary());
    }
    if (items.length === 0) throw new Malformed('empty expression');
    // At the top of a query without a top-level OR, identifiers are preferred, not required.
    const preferring =
      this.depth === 0 && this.oneTopSequence && items.some((item) => item.identifier);
    if (preferring) {
      this.preferred.push(...items.flatMap((item) => item.identifier ?? []));
      items = items.filter((item) => item.identifier === undefined);
    }
    const required = items.filter((item) => !item.optional).map((item) => item.constraint);
    const optional = items.filter((item) => item.optional).map((item) => item.constraint);
    if (required.length === 0) {
      // Beside a preferred identifier, bare words need no constraint: BM25 needs a shared term.
      if (preferring) return null;
      return optional.length === 1 ? optional[0]! : { kind: 'or', items: optional };
    }
    return required.length === 1 ? required[0]! : { kind: 'and', items: required };
  }

  private unary(): Item {
    const next = this.peek();
    if (next?.t === 'not' || next?.t === 'minus') {
      this.at++;
      this.negations++;
      const item = this.unary().constraint;
      this.negations--;
      return { constraint: { kind: 'not', item }, optional: false };
    }
    if (next?.t === 'plus') {
      this.at++;
      // `+ERR_X` is required, not preferred.
      return { constraint: this.unary().constraint, optional: false };
    }
    return this.atom();
  }

  private atom(): Item {
    const token = this.tokens[this.at++];
    if (token && 'text' in token && this.negations === 0) this.positive.push(token.text);
    switch (token?.t) {
      case 'word':
        return { constraint: { kind: 'word', text: token.text }, optional: true };
      case 'ident':
        return {
          constraint: { kind: 'literal', text: token.text },
          optional: false,
          identifier: token.text,
        };
      case 'phrase':
        return { constraint: { kind: 'phrase', text: token.text }, optional: false };
      case 'lparen': {
        const from = this.at;
        this.depth++;
        const inner = this.orExpr()!;
        this.depth--;
        if (this.tokens[this.at++]?.t !== 'rparen') throw new Malformed('unclosed parenthesis');
        // Without an operator inside, parentheses are punctuation: "(MEDLARS)" is a word.
        const operators = this.tokens
          .slice(from, this.at - 1)
          .some((t) => t.t !== 'word' && t.t !== 'lparen' && t.t !== 'rparen');
        return { constraint: inner, optional: !operators };
      }
      default:
        throw new Malformed('expected a term');
    }
  }
}

const and = (items: LexicalConstraint[]): LexicalConstraint => ({
  kind: 'and',
  items: items.flatMap((item) => (item.kind === 'and' ? item.items : [item])),
});

/**
 * Past this many words a query is prose (a long question, a pasted passage): its quotes and
 * parentheses are punctuation, its capitals are not operators. On CISI's 76 queries (abstracts and
 * long questions) reading them as syntax made 8 queries' quoted mentions and parenthesized
 * acronyms required and cost lexical nDCG@10 0.014.
 */
export const PROSE_WORDS = 12;

export function parseLexicalQuery(query: string): ParsedLexicalQuery {
  if (query.trim().split(/\s+/).length > PROSE_WORDS) {
    return { scoringText: query, constraint: null, preferred: [], syntax: 'plain' };
  }
  try {
    const tokens = tokenize(query);
    // Only words: BM25 as it always was, on the text as typed.
    // (parentheses around words only are punctuation)
    if (
      tokens.every((token) => token.t === 'word' || token.t === 'lparen' || token.t === 'rparen')
    ) {
      return { scoringText: query, constraint: null, preferred: [], syntax: 'plain' };
    }
    const parser = new Parser(tokens);
    const constraint = parser.parse();
    return {
      scoringText: parser.positive.join(' '),
      constraint,
      preferred: parser.preferred,
      syntax: 'structured',
    };
  } catch (error) {
    if (!(error instanceof Malformed)) throw error;
    return { scoringText: plainWords(query), constraint: null, preferred: [], syntax: 'malformed' };
  }
}

/** The query with its syntax characters and upper-case operators taken out. */
function plainWords(query: string): string {
  return query
    .replace(/["“”()]/g, ' ')
    .split(/\s+/)
    .map((word) => word.replace(/^[-+]+/, ''))
    .filter((word) => word && word !== 'AND' && word !== 'OR' && word !== 'NOT')
    .join(' ');
}
