import { classifyQuery, type QueryType, semanticWeightFor } from './query-type.classifier';

describe('classifyQuery', () => {
  it.each<[string, QueryType]>([
    ['"index generation" bump', 'phrase'],
    ['where is “blue green swap” described', 'phrase'],
    ['cache AND redis', 'boolean'],
    ['cache -redis', 'boolean'],
    ['(eviction OR expiry) NOT memcached', 'boolean'],
    ['ERR_CONNECTION_RESET OR ECONNRESET', 'boolean'],
    // lower-case "or", "not" are words; a malformed query is plain words
    ['salt or pepper', 'keywords'],
    ['cache AND', 'keywords'],
    ['ORA-00942 table or view does not exist', 'error'],
    ['E1234', 'error'],
    ['connect ECONNREFUSED 127.0.0.1:5432', 'error'],
    ['TypeError: Cannot read properties of undefined', 'error'],
    ['why do I get NullPointerException here?', 'error'],
    ['fatal: not a git repository', 'error'],
    ['kb_search_results histogram', 'identifier'],
    ['HYBRID_SEMANTIC_WEIGHT', 'identifier'],
    ['where is retrieveContext called?', 'identifier'],
    ['SearchService', 'identifier'],
    ['os.path.join', 'identifier'],
    ['latestVersionsOnly()', 'identifier'],
    ['How did the orbiter slow down at Venus?', 'question'],
    ['what is aerobraking', 'question'],
    ['the probe reached Mars orbit?', 'question'],
    ['comets tails dust', 'keywords'],
    ['Venus orbiter', 'keywords'],
    // Neither an apostrophe nor an abbreviation is a phrase or an identifier.
    ["the user's id, e.g. the first", 'keywords'],
    ['is pi 3.14', 'question'],
  ])('%s → %s', (query, type) => {
    expect(classifyQuery(query)).toBe(type);
  });
});

describe('semanticWeightFor', () => {
  it('leans exact strings lexical and questions semantic, and leaves keywords alone', () => {
    expect(semanticWeightFor('phrase', 0.7)).toBe(0.3);
    expect(semanticWeightFor('boolean', 0.7)).toBe(0.3);
    expect(semanticWeightFor('error', 0.7)).toBe(0.3);
    expect(semanticWeightFor('identifier', 0.7)).toBe(0.3);
    expect(semanticWeightFor('question', 0.7)).toBe(0.85);
    expect(semanticWeightFor('keywords', 0.7)).toBe(0.7);
  });

  it('never leans against a deployment that already leans that way further', () => {
    expect(semanticWeightFor('identifier', 0.2)).toBe(0.2);
    expect(semanticWeightFor('question', 0.95)).toBe(0.95);
  });
});
