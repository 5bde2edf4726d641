import { DEFAULT_CHUNKER, type Pipeline, pipelineOf } from '@kb/contracts';

import { matchedByRules, membershipOf, needsRedrive, spacesOf } from './membership.rules';

const defaults = { chunker: DEFAULT_CHUNKER, model: 'all-MiniLM-L6-v2' };
const standard = pipelineOf('t1', DEFAULT_CHUNKER, 'all-MiniLM-L6-v2', defaults);
const other = pipelineOf('t1', DEFAULT_CHUNKER, 'test-hashing-384', defaults);
const token = pipelineOf('t1', { strategy: 'token', size: 256, overlap: 32 }, 'm', defaults);

describe('membership', () => {
  const rules = [
    { knowledgeBaseId: 'finance', anyOf: ['invoice', 'budget'] },
    { knowledgeBaseId: 'ops', anyOf: ['runbook'] },
  ];

  it('matches the knowledge bases whose rule names one of the tags, in the rules’ order', () => {
    expect(matchedByRules(rules, ['runbook', 'budget'])).toEqual(['finance', 'ops']);
    expect(matchedByRules(rules, ['holiday'])).toEqual([]);
    expect(matchedByRules([], ['runbook'])).toEqual([]);
  });

  it('puts the explicit knowledge bases first, then those matched, each once', () => {
    expect(membershipOf(['ops', 'default'], ['finance', 'ops'])).toEqual([
      'ops',
      'default',
      'finance',
    ]);
    expect(membershipOf(['default', 'default'], [])).toEqual(['default']);
  });

  it('re-drives only when the document needs a pipeline it was not indexed by', () => {
    const named = (...pipelines: Pipeline[]) => pipelines;
    expect(needsRedrive(named(standard), named(standard, other))).toBe(true);
    expect(needsRedrive(named(standard, other), named(other))).toBe(false); // leaving one
    expect(needsRedrive(named(standard), named(standard))).toBe(false);
    expect(needsRedrive(named(standard, token), named(token, standard))).toBe(false); // order
  });

  it('lists the index space of each pipeline', () => {
    expect(spacesOf([standard, other])).toEqual(['t1', `t1~${other.key}`]);
  });
});
