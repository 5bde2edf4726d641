import { toIndexSpace, toTenantId } from '@kb/contracts';

import {
  fakeDocuments,
  fakeIndexes,
  newDocumentView,
  newHit,
} from '../../../test/support/search.fakes';
import { DocumentDetailsCache } from '../../documents/document-details.cache';
import { HitDetailsStep } from './hit-details.step';

const caller = { tenantId: toTenantId('t1'), userId: 'ann', roles: [], groups: [], token: 'tok' };
const space = () => toIndexSpace('t1');
const hits = [newHit(0, 0.9), newHit(0, 0.8, { documentId: 'd2' })];

/** The step over document-service holding `records`, with a cache whose consumer is joined. */
function step(records = [newDocumentView('d1'), newDocumentView('d2')]) {
  const { lexical } = fakeIndexes();
  const documents = fakeDocuments(records);
  const cache = new DocumentDetailsCache(30_000);
  cache.bindLiveness(() => true);
  return { step: new HitDetailsStep(lexical, documents.reader, cache), cache, documents, records };
}

describe('HitDetailsStep', () => {
  it("asks document-service once for the page's documents, then serves them from the cache", async () => {
    const { step: details, documents } = step();
    const first = await details.run(hits, space, caller);
    const second = await details.run(hits, space, caller);
    expect(documents.calls.getMany).toBe(1);
    expect(second.hits).toEqual(first.hits);
    expect(second.hits[0]).toMatchObject({ filename: 'd1.md', tags: ['guide'], page: 1 });
    expect(second.outcome).toBe('applied');
  });

  it('asks only for the documents the cache does not hold', async () => {
    const { step: details, documents } = step([newDocumentView('d1'), newDocumentView('d2')]);
    await details.run([hits[0]!], space, caller);
    await details.run(hits, space, caller);
    expect(documents.reads.map((r) => r.id)).toEqual(['d1', 'd2']);
  });

  it('shows an edit and drops a deleted document on the search after their events', async () => {
    const { step: details, cache, records } = step();
    await details.run(hits, space, caller);
    records[0] = newDocumentView('d1', { tags: ['renamed'], filename: 'renamed.md' });
    records.splice(1, 1); // d2 deleted
    cache.forget('t1', ['d1']);
    cache.forget('t1', ['d2']);
    const after = await details.run(hits, space, caller);
    expect(after.hits.map((h) => [h.documentId, h.filename, h.tags])).toEqual([
      ['d1', 'renamed.md', ['renamed']],
    ]);
    expect([...after.gone]).toEqual(['d2']);
  });

  it('keeps the hits without details, not cached, when document-service is down', async () => {
    const { lexical } = fakeIndexes();
    const cache = new DocumentDetailsCache(30_000);
    cache.bindLiveness(() => true);
    const down = new HitDetailsStep(lexical, fakeDocuments([], { down: true }).reader, cache);
    const result = await down.run(hits, space, caller);
    expect(result.outcome).toEqual({ skipped: 'documents_unavailable' });
    expect(result.hits).toHaveLength(2);
    expect(cache.lookup(caller, ['d1', 'd2']).missing).toEqual(['d1', 'd2']);
  });

  describe('with a prefetch', () => {
    /** The step over document-service holding d1 and d2, with no cache (nothing kept between reads). */
    function uncached(records = [newDocumentView('d1'), newDocumentView('d2')]) {
      const { lexical } = fakeIndexes();
      const options = { down: false };
      const documents = fakeDocuments(records, options);
      const details = new HitDetailsStep(lexical, documents.reader, new DocumentDetailsCache(0));
      return { details, documents, options };
    }

    it('takes up what the prefetch read and reads only the rest', async () => {
      const { details, documents } = uncached();
      const prefetch = details.prefetch(caller);
      prefetch.add(['d1']);
      prefetch.add(['d1']); // asked again: not read again
      const result = await details.run(hits, space, caller, prefetch);
      expect(documents.reads.map((r) => r.id)).toEqual(['d1', 'd2']);
      expect(documents.calls.getMany).toBe(2);
      expect(result.hits.map((h) => h.filename)).toEqual(['d1.md', 'd2.md']);
      expect(result.outcome).toBe('applied');
    });

    it('drops the hits of a document the prefetch found gone, and keeps only the page', async () => {
      const { details, documents } = uncached([newDocumentView('d2')]);
      const prefetch = details.prefetch(caller);
      prefetch.add(['d1', 'd2', 'd3']);
      const result = await details.run(hits, space, caller, prefetch);
      expect(documents.calls.getMany).toBe(1);
      expect([...result.gone]).toEqual(['d1']);
      expect(result.hits.map((h) => h.documentId)).toEqual(['d2']);
    });

    it('reads again what a failed prefetch could not', async () => {
      const { details, documents, options } = uncached();
      options.down = true;
      const prefetch = details.prefetch(caller);
      prefetch.add(['d1', 'd2']);
      await new Promise((resolve) => setImmediate(resolve));
      options.down = false;
      const result = await details.run(hits, space, caller, prefetch);
      expect(documents.calls.getMany).toBe(2);
      expect(result.outcome).toBe('applied');
      expect(result.hits.map((h) => h.filename)).toEqual(['d1.md', 'd2.md']);
    });
  });
});
