import { randomUUID } from 'node:crypto';

import { chunkerConfigSchema, DEFAULT_CHUNKER } from './chunking';
import { chunkSchema } from './events/chunk';
import { documentEventSchema } from './events/document.events';

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

  it('refuses an overlap not smaller than the size, out-of-bounds values and unknown keys', () => {
    expect(issues({ strategy: 'token', size: 100, overlap: 100 })).toEqual([
      'overlap: overlap must be smaller than size',
    ]);
    expect(issues({ strategy: 'sentence', size: 500, overlap: 600 })).toEqual([
      'overlap: overlap must be smaller than size',
    ]);
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

describe('events written before chunkers and heading paths existed', () => {
  it('parse: an uploaded event without a chunker, a chunk without a heading path', () => {
    const uploaded = documentEventSchema.parse({
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
    });
    expect(uploaded.kind === 'uploaded' && uploaded.chunker).toBeUndefined();
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
