import { DEFAULT_CHUNKER, pipelineOf } from '@kb/contracts';

import { distinctPipelines } from './pipeline.model';
import { pipelineDefaultsOf } from './pipeline-defaults.provider';

const defaults = pipelineDefaultsOf({
  CHUNK_SIZE: 1000,
  CHUNK_OVERLAP: 150,
  EMBEDDING_MODEL: 'all-MiniLM-L6-v2',
});

describe('pipelines', () => {
  it('builds the default pipeline from config, as the parser’s default chunker', () => {
    expect(defaults).toEqual({ chunker: DEFAULT_CHUNKER, model: 'all-MiniLM-L6-v2' });
  });

  it('gives each distinct (chunker, model) one pipeline, first seen first', () => {
    const markdown = { strategy: 'markdown', size: 800, overlap: 100, headingLevel: 2 } as const;
    const pipelines = distinctPipelines(
      't1',
      ['handbooks', 'default', 'manuals', 'legacy'],
      [
        { knowledgeBaseId: 'handbooks', chunker: markdown, embeddingModel: 'all-MiniLM-L6-v2' },
        { knowledgeBaseId: 'manuals', chunker: markdown, embeddingModel: 'all-MiniLM-L6-v2' },
        // Stored before strategies existed: `{}` is the default recursive chunker.
        { knowledgeBaseId: 'legacy', chunker: {}, embeddingModel: 'all-MiniLM-L6-v2' },
      ],
      defaults,
    );
    const handbooks = pipelineOf('t1', markdown, 'all-MiniLM-L6-v2', defaults);
    const standard = pipelineOf('t1', DEFAULT_CHUNKER, 'all-MiniLM-L6-v2', defaults);
    expect(pipelines).toEqual([
      { ...handbooks, knowledgeBaseIds: ['handbooks', 'manuals'] },
      { ...standard, knowledgeBaseIds: ['default', 'legacy'] },
    ]);
    expect(standard.space).toBe('t1'); // the default pipeline keeps the tenant's own space
  });

  it('puts a document in no knowledge base in default', () => {
    expect(distinctPipelines('t1', [], [], defaults)).toEqual([
      {
        ...pipelineOf('t1', DEFAULT_CHUNKER, 'all-MiniLM-L6-v2', defaults),
        knowledgeBaseIds: ['default'],
      },
    ]);
  });

  it('carries the strictest PII setting of its knowledge bases, and none when all are off', () => {
    const setting = (knowledgeBaseId: string, pii?: 'detect' | 'redact' | 'block') => ({
      knowledgeBaseId,
      chunker: {},
      embeddingModel: 'all-MiniLM-L6-v2',
      ...(pii ? { pii } : {}),
    });
    const [shared] = distinctPipelines(
      't1',
      ['audit', 'hr', 'wiki'],
      [setting('audit', 'detect'), setting('hr', 'redact'), setting('wiki')],
      defaults,
    );
    expect(shared).toMatchObject({ knowledgeBaseIds: ['audit', 'hr', 'wiki'], pii: 'redact' });
    const [plain] = distinctPipelines('t1', ['wiki'], [setting('wiki')], defaults);
    expect(plain).not.toHaveProperty('pii');
  });
});
