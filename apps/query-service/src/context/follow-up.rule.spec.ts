import { isFollowUp, rewriteByRule, topicWords } from './follow-up.rule';

describe('isFollowUp', () => {
  const before = 'How does the query service embed a question?';

  it.each([
    ['and how is it cached?', 'a continuation'],
    ['What about lexical search?', 'a continuation'],
    ['… and the reranker', 'an ellipsis'],
    ['Which model does it use?', 'a pronoun'],
    ['Why are those kept?', 'a pronoun'],
    ['Which version?', 'a short question after a longer one'],
  ])('%s: yes (%s)', (question) => {
    expect(isFollowUp(question, before)).toBe(true);
  });

  it.each([
    'How are documents split into chunks before embedding?',
    'Where are uploaded files stored in the cluster?',
  ])('%s: no, a new question', (question) => {
    expect(isFollowUp(question, before)).toBe(false);
  });

  it('never for the first question of a conversation', () => {
    expect(isFollowUp('and how is it cached?', undefined)).toBe(false);
  });
});

describe('rewriteByRule', () => {
  it('carries the topic of the last standalone user turn over a chain of follow-ups', () => {
    expect(
      rewriteByRule('and how is it cached?', [
        'How does the query service embed a question?',
        'Which model does it use?',
      ]),
    ).toEqual({ followUp: true, query: 'how is it cached? (query service embed question)' });
  });

  it('takes the topic from the newest standalone turn, and adds only words the question lacks', () => {
    expect(
      rewriteByRule('Is the index rebuilt?', [
        'How does the query service embed a question?',
        'Where are lexical index rows written by indexing-service?',
      ]),
    ).toEqual({
      followUp: true,
      query: 'Is the index rebuilt? (lexical rows written indexing-service)',
    });
  });

  it('leaves a standalone question as it is', () => {
    const question = 'How are documents split into chunks before embedding?';
    expect(rewriteByRule(question, ['What is BM25?'])).toEqual({
      followUp: false,
      query: question,
    });
    expect(rewriteByRule('and how is it cached?', [])).toEqual({
      followUp: false,
      query: 'and how is it cached?',
    });
  });

  it('keeps content words only as the topic', () => {
    expect(topicWords('What is the default fusion weight of the hybrid search?')).toEqual([
      'default',
      'fusion',
      'weight',
      'hybrid',
      'search',
    ]);
  });
});
