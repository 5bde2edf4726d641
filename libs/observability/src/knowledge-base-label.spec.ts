import {
  DEFAULT_MAX_KNOWLEDGE_BASES,
  KnowledgeBaseLabels,
  KnowledgeBaseLabelValue,
  maxKnowledgeBasesFromEnv,
} from './knowledge-base-label';

describe('KnowledgeBaseLabels', () => {
  it('labels the first `max` distinct ids by their id and every later one `_other`', () => {
    const labels = new KnowledgeBaseLabels(2);
    expect(labels.valueOf('handbook')).toBe('handbook');
    expect(labels.valueOf(['legal'])).toBe('legal');
    expect(labels.valueOf('sales')).toBe(KnowledgeBaseLabelValue.other);
    // Admitted ids keep their series after the cap is reached.
    expect(labels.valueOf('handbook')).toBe('handbook');
    expect(labels.valueOf(['legal'])).toBe('legal');
    expect(labels.valueOf('sales')).toBe(KnowledgeBaseLabelValue.other);
  });

  it('keeps the number of distinct values at max + the fixed ones, whatever it is asked', () => {
    const labels = new KnowledgeBaseLabels(10);
    const values = new Set<string | undefined>();
    for (let i = 0; i < 1000; i++) values.add(labels.valueOf(`kb-${i}`));
    expect(values.size).toBe(11);
    expect(values.has(KnowledgeBaseLabelValue.other)).toBe(true);
  });

  it('answers `_multiple` for several knowledge bases, and admits none of them', () => {
    const labels = new KnowledgeBaseLabels(1);
    expect(labels.valueOf(['handbook', 'legal'])).toBe(KnowledgeBaseLabelValue.multiple);
    expect(labels.valueOf(['handbook', 'handbook'])).toBe('handbook');
    expect(labels.valueOf('legal')).toBe(KnowledgeBaseLabelValue.other);
  });

  it('answers the empty value for no knowledge base: `_none` unless the caller names another', () => {
    const labels = new KnowledgeBaseLabels(5);
    expect(labels.valueOf([])).toBe(KnowledgeBaseLabelValue.none);
    expect(labels.valueOf(undefined)).toBe(KnowledgeBaseLabelValue.none);
    expect(labels.valueOf([], KnowledgeBaseLabelValue.all)).toBe('_all');
  });

  it('never admits a value that is not shaped like an id, so a reserved value cannot be faked', () => {
    const labels = new KnowledgeBaseLabels(5);
    for (const odd of ['_other', '_multiple', 'Upper', 'a b', 'x'.repeat(64), '']) {
      expect(labels.valueOf(odd)).toBe(KnowledgeBaseLabelValue.other);
    }
    expect(labels.valueOf('ok')).toBe('ok'); // none of them took a slot
  });

  it('is off with max 0: no value, and `label` leaves the attributes alone', () => {
    const labels = new KnowledgeBaseLabels(0);
    expect(labels.enabled).toBe(false);
    expect(labels.valueOf('handbook')).toBeUndefined();
    expect(labels.label({ outcome: 'created' }, 'handbook')).toEqual({ outcome: 'created' });
  });

  it('sets the label on the attributes it is given', () => {
    const labels = new KnowledgeBaseLabels(5);
    const attributes = { outcome: 'created' };
    expect(labels.label(attributes, ['handbook'])).toBe(attributes);
    expect(attributes).toEqual({ outcome: 'created', knowledge_base: 'handbook' });
  });

  it('refuses a cap that is not a whole number ≥ 0', () => {
    expect(() => new KnowledgeBaseLabels(-1)).toThrow(/whole number/);
    expect(() => new KnowledgeBaseLabels(1.5)).toThrow(/whole number/);
  });
});

describe('maxKnowledgeBasesFromEnv', () => {
  it('defaults to 100 and reads METRICS_MAX_KNOWLEDGE_BASES', () => {
    expect(maxKnowledgeBasesFromEnv({})).toBe(DEFAULT_MAX_KNOWLEDGE_BASES);
    expect(maxKnowledgeBasesFromEnv({ METRICS_MAX_KNOWLEDGE_BASES: '' })).toBe(100);
    expect(maxKnowledgeBasesFromEnv({ METRICS_MAX_KNOWLEDGE_BASES: '0' })).toBe(0);
    expect(maxKnowledgeBasesFromEnv({ METRICS_MAX_KNOWLEDGE_BASES: ' 250 ' })).toBe(250);
  });

  it('fails on a value that is not a whole number', () => {
    for (const bad of ['-1', 'ten', '1e3', '2.5']) {
      expect(() => maxKnowledgeBasesFromEnv({ METRICS_MAX_KNOWLEDGE_BASES: bad })).toThrow(
        /METRICS_MAX_KNOWLEDGE_BASES must be a whole number/,
      );
    }
  });
});
