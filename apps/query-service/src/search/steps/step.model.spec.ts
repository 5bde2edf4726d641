import { describeOutcome } from './step.model';

describe('describeOutcome', () => {
  it('reports an outcome the way the response states it', () => {
    expect(describeOutcome('off')).toBe('off');
    expect(describeOutcome('applied')).toBe('applied');
    expect(describeOutcome({ skipped: 'no_reranker_model' })).toBe('skipped: no_reranker_model');
  });
});
