import { randomUUID } from 'node:crypto';
import type { VectorRecord, VectorStore } from '../../src';

export const DIM = 8;
const unit = (hot: number): number[] => Array.from({ length: DIM }, (_, i) => (i === hot ? 1 : 0));
const record = (
  documentId: string,
  version: number,
  chunkIndex: number,
  vector: number[],
): VectorRecord => ({
  documentId,
  documentVersion: version,
  chunkIndex,
  vector,
  title: 't',
  text: `chunk ${chunkIndex} of v${version}`,
  startOffset: chunkIndex * 10,
  endOffset: chunkIndex * 10 + 9,
});

/** The behaviour every VectorStore backend must share; each backend's test file runs it. */
export function vectorStoreConformance(getStore: () => VectorStore): void {
  const tenant = `t-${randomUUID().slice(0, 8)}`;

  it('returns nearest chunks first with their metadata, scoped to the namespace', async () => {
    const store = getStore();
    const doc = randomUUID();
    await store.upsert(tenant, [
      record(doc, 1, 0, unit(0)),
      record(doc, 1, 1, unit(1)),
      record(doc, 1, 2, unit(2)),
    ]);
    await store.upsert(`${tenant}-other`, [record(randomUUID(), 1, 0, unit(1))]);
    const matches = await store.query(tenant, { vector: unit(1), topK: 2 });
    expect(matches).toHaveLength(2);
    expect(matches[0]).toMatchObject({
      documentId: doc,
      documentVersion: 1,
      chunkIndex: 1,
      title: 't',
      text: 'chunk 1 of v1',
      startOffset: 10,
      endOffset: 19,
    });
    expect(matches[0]!.score).toBeCloseTo(1, 5);
    expect(matches[0]!.score).toBeGreaterThanOrEqual(matches[1]!.score);
    expect(matches.every((m) => m.documentId === doc)).toBe(true);
  });

  it('upserting the same records twice keeps one copy', async () => {
    const store = getStore();
    const doc = randomUUID();
    const records = [record(doc, 1, 0, unit(3)), record(doc, 1, 1, unit(4))];
    await store.upsert(tenant, records);
    await store.upsert(tenant, records);
    expect(await store.countDocument(tenant, doc)).toBe(2);
  });

  it('removes older versions while keeping the given one, and reports the count', async () => {
    const store = getStore();
    const doc = randomUUID();
    await store.upsert(tenant, [
      record(doc, 1, 0, unit(5)),
      record(doc, 1, 1, unit(5)),
      record(doc, 2, 0, unit(6)),
    ]);
    expect(await store.deleteDocument(tenant, doc, 2)).toBe(2);
    expect(await store.countDocument(tenant, doc)).toBe(1);
    expect(await store.deleteDocument(tenant, doc)).toBe(1);
    expect(await store.countDocument(tenant, doc)).toBe(0);
  });
}
