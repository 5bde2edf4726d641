import { randomUUID } from 'node:crypto';

import { pipelineSpace, tenantSpace, toTenantId } from '@kb/contracts';
import type { LexicalWrite } from '@kb/lexical-index';
import {
  MemoryDocumentIndexState,
  MemoryIndexGenerations,
  MemoryLexicalIndex,
  MemoryVectorStore,
} from '@kb/testing';

import { orphanAction, OrphanSweeper } from './orphan.sweeper';

describe('orphanAction', () => {
  it('removes every chunk of a deleted document', () => {
    expect(orphanAction([1, 2], { version: 2, deleted: true })).toEqual({ remove: 'all' });
    expect(orphanAction([3], { deleted: true })).toEqual({ remove: 'all' });
  });

  it('removes versions older than the claimed one once the claimed one is in', () => {
    expect(orphanAction([1, 2, 3], { version: 3, deleted: false })).toEqual({
      remove: 'older',
      than: 3,
    });
  });

  it('leaves a document alone while its claimed version is still being written', () => {
    expect(orphanAction([1, 2], { version: 3, deleted: false })).toBeUndefined();
  });

  it('leaves consistent and unknown documents alone', () => {
    expect(orphanAction([2], { version: 2, deleted: false })).toBeUndefined();
    expect(orphanAction([1, 2], undefined)).toBeUndefined();
    expect(orphanAction([1], { deleted: false })).toBeUndefined();
  });
});

describe('OrphanSweeper', () => {
  const chunk = (documentId: string, documentVersion: number): LexicalWrite => ({
    documentId,
    documentVersion,
    chunkIndex: 0,
    title: 'Doc',
    text: `version ${documentVersion}`,
    startOffset: 0,
    endOffset: 9,
    attributes: { knowledgeBaseIds: [], tags: [], metadata: {}, uploadedAt: 0, principals: [] },
  });

  it("sweeps every tenant's own space and every pipeline's, and retires cached results", async () => {
    const [acme, globex] = [toTenantId('acme'), toTenantId('globex')];
    const pipeline = pipelineSpace(globex, 'abcdef123456');
    const [deleted, replaced] = [randomUUID(), randomUUID()];
    const lexical = new MemoryLexicalIndex();
    const generations = new MemoryIndexGenerations();
    const state = new MemoryDocumentIndexState();
    // acme's document was deleted while its chunks were being written to acme's own space.
    await generations.bump(acme);
    await state.tombstone(acme, deleted);
    await lexical.upsert(tenantSpace(acme), [chunk(deleted, 1)]);
    // globex's document holds v2 in a pipeline space; a slower v1 was written after it.
    await state.claimVersion(pipeline, replaced, 2);
    await state.recordSpace(globex, replaced, pipeline, 2, 1);
    await lexical.upsert(pipeline, [chunk(replaced, 1), chunk(replaced, 2)]);
    const sweeper = new OrphanSweeper(new MemoryVectorStore(), lexical, generations, state, {
      ORPHAN_SWEEP_INTERVAL_MS: 0,
    });

    const report = await sweeper.sweep();

    expect(report).toEqual({ vectors: 0, lexical: 2, documents: [deleted, replaced] });
    expect(await lexical.countDocument(tenantSpace(acme), deleted)).toBe(0);
    expect(await lexical.countDocument(pipeline, replaced)).toBe(1);
    expect(await generations.current(acme)).toBe(2);
    expect(await generations.current(globex)).toBe(1);
  });
});
