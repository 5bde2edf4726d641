import { isIdentifier, parseLexicalQuery } from './lexical-query.parser';

const word = (text: string) => ({ kind: 'word', text });
const phrase = (text: string) => ({ kind: 'phrase', text });
const literal = (text: string) => ({ kind: 'literal', text });

describe('parseLexicalQuery', () => {
  it('leaves plain words alone: no constraint, the text as typed', () => {
    expect(parseLexicalQuery('sail rigging, of ships')).toEqual({
      scoringText: 'sail rigging, of ships',
      constraint: null,
      preferred: [],
      syntax: 'plain',
    });
    // lower-case "and"/"or"/"not" are words (stop words), not operators
    expect(parseLexicalQuery('salt and pepper or not').constraint).toBeNull();
    expect(parseLexicalQuery('   ').syntax).toBe('plain');
  });

  it('requires a quoted phrase; the other words stay optional and score', () => {
    expect(parseLexicalQuery('"connection reset" timeout')).toEqual({
      scoringText: 'connection reset timeout',
      constraint: phrase('connection reset'),
      preferred: [],
      syntax: 'structured',
    });
    expect(parseLexicalQuery('“smart quotes” too').constraint).toEqual(phrase('smart quotes'));
  });

  it('keeps identifiers and error strings whole, preferred among plain words', () => {
    for (const id of [
      'ERR_CONNECTION_RESET',
      'foo.bar()',
      'kb_search_results',
      'fooBar',
      'SearchService',
      'ORA-00942',
      'E1234',
      '0xC0000005',
      'std::vector',
      'parse(input)',
    ]) {
      expect(parseLexicalQuery(`why ${id}`)).toEqual({
        scoringText: `why ${id}`,
        constraint: null,
        preferred: [id],
        syntax: 'structured',
      });
    }
    // trailing sentence punctuation is not part of it
    expect(parseLexicalQuery('calls foo.bar().').preferred).toEqual(['foo.bar()']);
    expect(parseLexicalQuery('ERR_CONNECTION_RESET, again').scoringText).toBe(
      'ERR_CONNECTION_RESET again',
    );
    for (const plain of ['e.g.', 'U.S.', 'well-known', 'Hello', 'COVID']) {
      expect(isIdentifier(plain)).toBe(false);
    }
  });

  it('requires an identifier typed with syntax: +, AND, a group, a top-level OR', () => {
    const required = (query: string) => parseLexicalQuery(query);
    expect(required('+ERR_CONNECTION_RESET retry')).toMatchObject({
      constraint: literal('ERR_CONNECTION_RESET'),
      preferred: [],
    });
    expect(required('ERR_CONNECTION_RESET AND retry')).toMatchObject({
      constraint: { kind: 'and', items: [literal('ERR_CONNECTION_RESET'), word('retry')] },
      preferred: [],
    });
    expect(required('(GnuPG keys) archive').constraint).toEqual(literal('GnuPG'));
    expect(required('GnuPG OR gpg')).toMatchObject({
      constraint: { kind: 'or', items: [literal('GnuPG'), word('gpg')] },
      preferred: [],
    });
    // beside other typed syntax, the identifier stays preferred and the syntax required
    expect(required('GnuPG "archive keys" -expired')).toMatchObject({
      constraint: {
        kind: 'and',
        items: [phrase('archive keys'), { kind: 'not', item: word('expired') }],
      },
      preferred: ['GnuPG'],
    });
  });

  it('reads AND, OR, NOT, -term, +term and parentheses', () => {
    expect(parseLexicalQuery('cache AND redis').constraint).toEqual({
      kind: 'and',
      items: [word('cache'), word('redis')],
    });
    expect(parseLexicalQuery('cache OR redis').constraint).toEqual({
      kind: 'or',
      items: [word('cache'), word('redis')],
    });
    expect(parseLexicalQuery('cache -redis')).toEqual({
      scoringText: 'cache',
      constraint: { kind: 'not', item: word('redis') },
      preferred: [],
      syntax: 'structured',
    });
    expect(parseLexicalQuery('cache NOT "redis cluster"').constraint).toEqual({
      kind: 'not',
      item: phrase('redis cluster'),
    });
    expect(parseLexicalQuery('+cache redis').constraint).toEqual(word('cache'));
    expect(parseLexicalQuery('(cache OR store) AND -redis')).toEqual({
      scoringText: 'cache store',
      constraint: {
        kind: 'and',
        items: [
          { kind: 'or', items: [word('cache'), word('store')] },
          { kind: 'not', item: word('redis') },
        ],
      },
      preferred: [],
      syntax: 'structured',
    });
    // an optional word beside an AND group still scores
    expect(parseLexicalQuery('eviction cache AND redis').scoringText).toBe('eviction cache redis');
  });

  it('reads long prose as plain words, and parentheses without an operator as punctuation', () => {
    const prose =
      'What are the characteristics of MEDLARS (Medical Literature Analysis and Retrieval System) and the "linguistic filter" it uses?';
    expect(parseLexicalQuery(prose)).toEqual({
      scoringText: prose,
      constraint: null,
      preferred: [],
      syntax: 'plain',
    });
    expect(parseLexicalQuery('MEDLARS (NICSEM) thesaurus').constraint).toBeNull();
    expect(parseLexicalQuery('()').syntax).toBe('plain');
    expect(parseLexicalQuery('thesaurus (NICSEM) "term list"').constraint).toEqual(
      phrase('term list'),
    );
  });

  it('reads a minus inside or before a number as part of the word', () => {
    expect(parseLexicalQuery('well-known -5 degrees').constraint).toBeNull();
  });

  it('reads a spaced double dash as punctuation and a command-line flag as a word', () => {
    // Package synopses: "GNU Privacy Guard -- minimalist public key operations".
    expect(parseLexicalQuery('GNU Privacy Guard -- public key operations')).toMatchObject({
      constraint: null,
      syntax: 'plain',
    });
    expect(
      parseLexicalQuery('messaging system (systemd --user integration)').constraint,
    ).toBeNull();
    expect(parseLexicalQuery('cache -- -redis').constraint).toEqual({
      kind: 'not',
      item: word('redis'),
    });
    expect(parseLexicalQuery('cache -(redis OR memcached)').constraint).toEqual({
      kind: 'not',
      item: { kind: 'or', items: [word('redis'), word('memcached')] },
    });
  });

  it('leaves in the constraint only syntax that was typed (what the semantic side is held to)', () => {
    const constraint = (query: string) => parseLexicalQuery(query).constraint;
    // An identifier spotted in plain text is a preference, not an operator.
    expect(constraint('GnuPG archive keys')).toBeNull();
    expect(constraint('ERR_CONNECTION_RESET retry')).toBeNull();
    expect(constraint('tides')).toBeNull();
    // Exclusions (identifiers included), phrases and operators stay.
    expect(constraint('retry -ERR_CONNECTION_RESET')).toEqual({
      kind: 'not',
      item: literal('ERR_CONNECTION_RESET'),
    });
    expect(constraint('GnuPG "archive keys"')).toEqual(phrase('archive keys'));
    expect(constraint('cache AND redis')).toEqual({
      kind: 'and',
      items: [word('cache'), word('redis')],
    });
  });

  it('degrades malformed syntax to plain words, never throwing', () => {
    for (const [query, words] of [
      ['"unclosed phrase here', 'unclosed phrase here'],
      ['(cache OR redis', 'cache redis'],
      ['cache OR redis)', 'cache redis'],
      ['AND cache', 'cache'],
      ['cache AND', 'cache'],
      ['cache OR OR redis', 'cache redis'],
      ['NOT', ''],
      ['- + -- "', ''],
    ] as const) {
      expect(parseLexicalQuery(query)).toEqual({
        scoringText: words,
        constraint: null,
        preferred: [],
        syntax: 'malformed',
      });
    }
  });

  it('never throws on arbitrary input', () => {
    const alphabet = [
      'a',
      'B',
      '"',
      '“',
      '”',
      '(',
      ')',
      '-',
      '+',
      ' ',
      'AND',
      'OR',
      'NOT',
      '_',
      '.',
      ':',
    ];
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647);
    for (let i = 0; i < 2000; i++) {
      const query = Array.from(
        { length: next() % 12 },
        () => alphabet[next() % alphabet.length],
      ).join(next() % 2 ? ' ' : '');
      const parsed = parseLexicalQuery(query);
      expect(['plain', 'structured', 'malformed']).toContain(parsed.syntax);
    }
  });
});
