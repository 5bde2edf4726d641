import { randomUUID } from 'node:crypto';

import { chunkerConfigSchema, DEFAULT_CHUNKER } from './chunking';
import { chunkSchema } from './events/chunk';
import {
  chunksEmbeddedSchema,
  documentEventSchema,
  documentParsedSchema,
} from './events/document.events';
import { pipelineOf } from './pipeline';

const issues = (value: unknown): string[] => {
  const result = chunkerConfigSchema.safeParse(value);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('chunkerConfigSchema', () => {
  it('defaults to recursive 1000/150, and reads a config without a strategy as recursive', () => {
    expect(DEFAULT_CHUNKER).toEqual({ strategy: 'recursive', size: 1000, overlap: 150 });
    expect(chunkerConfigSchema.parse({ size: 500, overlap: 50 })).toEqual({
      strategy: 'recursive',
      size: 500,
      overlap: 50,
    });
  });

  it('fills each strategy’s defaults', () => {
    expect(
      ['recursive', 'sentence', 'paragraph', 'markdown', 'token'].map((strategy) =>
        chunkerConfigSchema.parse({ strategy }),
      ),
    ).toEqual([
      { strategy: 'recursive', size: 1000, overlap: 150 },
      { strategy: 'sentence', size: 1000, overlap: 150 },
      { strategy: 'paragraph', size: 1000 },
      { strategy: 'markdown', size: 1000, overlap: 150, headingLevel: 3 },
      { strategy: 'token', size: 256, overlap: 32 },
    ]);
    expect(chunkerConfigSchema.parse({ strategy: 'recursive', separators: ['\n\n', ''] })).toEqual({
      strategy: 'recursive',
      size: 1000,
      overlap: 150,
      separators: ['\n\n', ''],
    });
  });

  it('refuses an overlap over half the size, out-of-bounds values and unknown keys', () => {
    expect(issues({ strategy: 'token', size: 100, overlap: 100 })).toEqual([
      'overlap: overlap must be at most half of size',
    ]);
    expect(issues({ strategy: 'sentence', size: 500, overlap: 600 })).toEqual([
      'overlap: overlap must be at most half of size',
    ]);
    // 100 chunks' worth of embeddings for one chunk's worth of text: refused.
    expect(issues({ strategy: 'recursive', size: 100, overlap: 99 })).toEqual([
      'overlap: overlap must be at most half of size',
    ]);
    expect(issues({ strategy: 'recursive', size: 100, overlap: 50 })).toEqual([]);
    expect(issues({ size: 50, overlap: 10 })).toEqual([
      'size: Too small: expected number to be >=100',
    ]);
    expect(issues({ strategy: 'token', size: 8, overlap: 0 })).toHaveLength(1);
    expect(issues({ strategy: 'markdown', headingLevel: 7 })).toHaveLength(1);
    expect(issues({ strategy: 'recursive', separators: [] })).toHaveLength(1);
    expect(issues({ strategy: 'paragraph', overlap: 10 })).toEqual([
      ': Unrecognized key: "overlap"',
    ]);
    expect(issues({ strategy: 'semantic' })).toHaveLength(1);
    expect(issues('recursive')).toHaveLength(1);
  });
});

describe('events name their pipelines', () => {
  const uploaded = {
    kind: 'uploaded',
    documentId: randomUUID(),
    version: 1,
    filename: 'a.md',
    contentType: 'text/markdown',
    sizeBytes: 3,
    sha256: 'a'.repeat(64),
    blob: { bucket: 'b', key: 'k' },
    title: 'a',
    metadata: {},
  };
  const pipeline = pipelineOf('t1', DEFAULT_CHUNKER, 'm', { chunker: DEFAULT_CHUNKER, model: 'm' });
  const ref = { key: pipeline.key, model: 'm', space: 't1', versionSpaces: ['t1'] };
  const parsed = {
    documentId: randomUUID(),
    version: 1,
    title: 'a',
    chunkCount: 1,
    chunks: { bucket: 'b', key: 'k' },
  };
  const embedded = { ...parsed, model: 'm', dimension: 3, embeddings: { bucket: 'b', key: 'e' } };

  it('refuses, as malformed, an event of the pipeline that names none (nothing was released without them)', () => {
    expect(documentEventSchema.safeParse(uploaded).success).toBe(false);
    expect(documentEventSchema.safeParse({ ...uploaded, pipelines: [] }).success).toBe(false);
    expect(documentEventSchema.safeParse({ ...uploaded, pipelines: [pipeline] }).success).toBe(
      true,
    );
    expect(documentParsedSchema.safeParse(parsed).success).toBe(false);
    expect(documentParsedSchema.safeParse({ ...parsed, pipeline: ref }).success).toBe(true);
    expect(chunksEmbeddedSchema.safeParse(embedded).success).toBe(false);
    expect(chunksEmbeddedSchema.safeParse({ ...embedded, pipeline: ref }).success).toBe(true);
    const changed = {
      kind: 'attributes_changed',
      documentId: randomUUID(),
      attributes: { knowledgeBaseIds: [], tags: [], metadata: {} },
    };
    expect(documentEventSchema.safeParse(changed).success).toBe(false);
    expect(documentEventSchema.safeParse({ ...changed, spaces: ['t1'] }).success).toBe(true);
  });

  it('reads a chunk without a heading path as one at the top level', () => {
    const chunk = chunkSchema.parse({
      index: 0,
      text: 'x',
      start: 0,
      end: 1,
      sha256: 'h',
      tokenCount: 1,
    });
    expect(chunk.headingPath).toEqual([]);
  });
});
