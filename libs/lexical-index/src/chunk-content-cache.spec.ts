import { toIndexSpace } from '@kb/contracts';

import { ChunkContentCache } from './chunk-content-cache';

const ref = (documentId: string, chunkIndex = 0) => ({
  documentId,
  documentVersion: 1,
  chunkIndex,
});
const key = (documentId: string, chunkIndex = 0) => `${documentId}#1#${chunkIndex}`;

describe('ChunkContentCache', () => {
  const space = toIndexSpace('t1');

  /** A source of texts that records which chunks each read asked for. */
  const source = (texts: Record<string, string>) => {
    const reads: string[][] = [];
    const read = async (missing: ReturnType<typeof ref>[]) => {
      reads.push(missing.map((c) => key(c.documentId, c.chunkIndex)));
      return new Map(
        missing.flatMap((c) => {
          const text = texts[key(c.documentId, c.chunkIndex)];
          return text === undefined ? [] : [[key(c.documentId, c.chunkIndex), { text }] as const];
        }),
      );
    };
    return { reads, read };
  };

  it('reads only the chunks it does not hold, in one read', async () => {
    const cache = new ChunkContentCache<{ text: string }>(1_000, ({ text }) => text.length);
    const { reads, read } = source({ [key('a')]: 'alpha', [key('b')]: 'beta' });
    expect(await cache.get(space, [ref('a')], read)).toEqual(
      new Map([[key('a'), { text: 'alpha' }]]),
    );
    const both = await cache.get(space, [ref('a'), ref('b')], read);
    expect(both).toEqual(
      new Map([
        [key('a'), { text: 'alpha' }],
        [key('b'), { text: 'beta' }],
      ]),
    );
    expect(await cache.get(space, [ref('b'), ref('a')], read)).toEqual(both);
    expect(reads).toEqual([[key('a')], [key('b')]]);
  });

  it('does not remember a chunk the source did not return', async () => {
    const cache = new ChunkContentCache<{ text: string }>(1_000, ({ text }) => text.length);
    const { reads, read } = source({});
    expect(await cache.get(space, [ref('gone')], read)).toEqual(new Map());
    expect(await cache.get(space, [ref('gone')], read)).toEqual(new Map());
    expect(reads).toEqual([[key('gone')], [key('gone')]]);
  });

  it('keeps each space apart', async () => {
    const cache = new ChunkContentCache<{ text: string }>(1_000, ({ text }) => text.length);
    const first = source({ [key('a')]: 'in t1' });
    const second = source({ [key('a')]: 'in t2' });
    await cache.get(space, [ref('a')], first.read);
    expect(await cache.get(toIndexSpace('t2'), [ref('a')], second.read)).toEqual(
      new Map([[key('a'), { text: 'in t2' }]]),
    );
  });

  it('evicts the least recently used once its size is reached', async () => {
    const cache = new ChunkContentCache<{ text: string }>(10, ({ text }) => text.length);
    const { reads, read } = source({ [key('a')]: 'aaaa', [key('b')]: 'bbbb', [key('c')]: 'cccc' });
    await cache.get(space, [ref('a'), ref('b')], read);
    await cache.get(space, [ref('a')], read); // a is now the most recent
    await cache.get(space, [ref('c')], read); // 12 > 10: b goes
    expect(cache.size).toBe(2);
    await cache.get(space, [ref('a'), ref('b'), ref('c')], read);
    expect(reads).toEqual([[key('a'), key('b')], [key('c')], [key('b')]]);
  });
});
