import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { chunkerConfigSchema, type TokenChunkerConfig } from '@kb/contracts';

import { chunkDocument } from '../src/chunking/document.chunker';
import { markdownHeadings } from '../src/chunking/headings.parser';
import { loadTokenCounter, ModelTokenCounter } from '../src/chunking/model-token.counter';
import { expectedGuidePath, GUIDE, VARIED_TEXTS } from './fixtures/chunking.fixtures';

jest.setTimeout(120_000);

const MODEL_DIR = process.env['EMBEDDING_MODEL_DIR'] ?? '';
const MODEL = process.env['EMBEDDING_MODEL'] ?? 'all-MiniLM-L6-v2';

/**
 * The token chunker and every chunk's token count with the embedding model's own tokenizer, from
 * the folder scripts/infra/fetch-model.sh fills (`npm run infra:up`), checked against that
 * tokenizer loaded on its own.
 */
describe('token chunking with the embedding model tokenizer', () => {
  let counter: ModelTokenCounter;
  let reference: { encode(text: string): number[] };

  beforeAll(async () => {
    if (!existsSync(join(MODEL_DIR, MODEL, 'tokenizer.json'))) {
      throw new Error(
        `no tokenizer at ${MODEL_DIR}/${MODEL}: run npm run infra:up (it fetches the model)`,
      );
    }
    counter = await ModelTokenCounter.load({ modelDir: MODEL_DIR, model: MODEL });
    // The reference: the tokenizer loaded on its own, the way transformers.js documents it.
    const { AutoTokenizer, env } = await import('@huggingface/transformers');
    env.allowRemoteModels = false;
    env.localModelPath = `${MODEL_DIR}/`;
    reference = await AutoTokenizer.from_pretrained(MODEL);
  });

  it('is what the service loads when the model folder exists', async () => {
    const loaded = await loadTokenCounter({ modelDir: MODEL_DIR, model: MODEL }, (message) => {
      throw new Error(message);
    });
    expect(loaded).toBeInstanceOf(ModelTokenCounter);
    expect(loaded.unit).toBe(MODEL);
  });

  it('counts special tokens: [CLS] and [SEP] around every text', () => {
    expect(counter.count('')).toBe(2);
    expect(counter.count('Hello world')).toBe(reference.encode('Hello world').length);
    expect(counter.countPiece('Hello world')).toBe(2);
  });

  const configs: TokenChunkerConfig[] = [
    { strategy: 'token', size: 32, overlap: 8 },
    { strategy: 'token', size: 128, overlap: 0 },
    chunkerConfigSchema.parse({ strategy: 'token' }) as TokenChunkerConfig,
  ];

  it.each(configs.map((c) => [c.size, c.overlap, c] as const))(
    'size %i, overlap %i: exact offsets, token counts equal to encode(), within size and overlap',
    async (_size, _overlap, config) => {
      for (const [name, text] of Object.entries(VARIED_TEXTS)) {
        const chunks = await chunkDocument(
          { text, headings: markdownHeadings(text) },
          config,
          counter,
        );
        const covered = new Uint8Array(text.length);
        for (const [i, chunk] of chunks.entries()) {
          const context = `${name} chunk ${i}`;
          expect({ context, text: text.slice(chunk.start, chunk.end) }).toEqual({
            context,
            text: chunk.text,
          });
          expect({ context, tokens: chunk.tokenCount }).toEqual({
            context,
            tokens: reference.encode(chunk.text).length,
          });
          expect(chunk.tokenCount).toBeLessThanOrEqual(config.size);
          covered.fill(1, chunk.start, chunk.end);
          const previous = chunks[i - 1];
          if (previous && chunk.start < previous.end) {
            const repeated = text.slice(chunk.start, previous.end);
            expect(reference.encode(repeated).length - 2).toBeLessThanOrEqual(config.overlap);
          }
        }
        expect([...text.matchAll(/\S/g)].filter((m) => covered[m.index] === 0)).toEqual([]);
      }
    },
  );

  it('fills chunks close to the size on prose (word sums match BERT counts)', async () => {
    const text = VARIED_TEXTS['prose']!.repeat(4);
    const chunks = await chunkDocument(
      { text, headings: [] },
      { strategy: 'token', size: 64, overlap: 0 },
      counter,
    );
    const full = chunks.slice(0, -1).map((c) => c.tokenCount);
    expect(Math.min(...full)).toBeGreaterThan(48);
  });

  it('gives every chunker model token counts and heading paths on the guide', async () => {
    for (const strategy of ['recursive', 'sentence', 'paragraph', 'markdown', 'token'] as const) {
      const config = chunkerConfigSchema.parse(
        strategy === 'token'
          ? { strategy, size: 48, overlap: 8 }
          : { strategy, size: 200, ...(strategy === 'paragraph' ? {} : { overlap: 40 }) },
      );
      const chunks = await chunkDocument(
        { text: GUIDE, headings: markdownHeadings(GUIDE) },
        config,
        counter,
      );
      for (const chunk of chunks) {
        expect(chunk.tokenCount).toBe(reference.encode(chunk.text).length);
        expect(chunk.headingPath).toEqual(expectedGuidePath(chunk.start));
      }
    }
  });
});
