import { activeOnly, toIndexSpace, toTenantId } from '@kb/contracts';
import { TestEmbeddingProvider } from '@kb/embeddings';

import {
  fakeDocuments,
  fakeIndexes,
  newDocumentView,
  newMatch,
} from '../../test/support/search.fakes';
import { DocumentDetailsCache } from '../documents/document-details.cache';
import { HybridRetrieval } from './hybrid.retrieval';
import { QueryEmbedder } from './query.embedder';
import { DEFAULT_SEARCH_TUNING } from './search.model';
import { similarRequestSchema } from './similar.model';
import { centroid, SimilarService } from './similar.service';
import { HitDetailsStep } from './steps/hit-details.step';

const tenant = toTenantId('t1');
const caller = { tenantId: tenant, userId: 'ann', roles: [], groups: [], token: 'tok' };

/** d1 has chunks 0 and 1 stored; vector search answers d2 #0, d2 #1 and d3 #0. */
function similarService(options: { storedChunks?: number } = {}) {
  const { storedChunks = 2 } = options;
  const stored = Object.fromEntries(
    Array.from({ length: storedChunks }, (_, i) => [i, i === 0 ? [1, 0] : [0, 1]]),
  );
  const { vectors, lexical, calls } = fakeIndexes({
    stored,
    vector: [
      newMatch(0, 0.9, { documentId: 'd2' }),
      newMatch(1, 0.8, { documentId: 'd2' }),
      newMatch(0, 0.7, { documentId: 'd3' }),
    ],
  });
  const documents = fakeDocuments(['d1', 'd2', 'd3'].map((id) => newDocumentView(id)));
  const index = {
    knowledgeBaseSpaces: async () => [{ space: toIndexSpace('t1'), model: undefined }],
  };
  const embedder = new QueryEmbedder(
    { main: new TestEmbeddingProvider(), mainName: 'm', extra: [] },
    null,
  );
  const retrieval = new HybridRetrieval(embedder, vectors, lexical, index, DEFAULT_SEARCH_TUNING);
  const service = new SimilarService(
    retrieval,
    embedder,
    vectors,
    { countDocument: async () => 4 },
    documents.reader,
    new HitDetailsStep(lexical, documents.reader, new DocumentDetailsCache(0)),
  );
  return { service, calls, reads: documents.reads };
}

describe('SimilarService', () => {
  it("searches by the document's mean vector, the document itself excluded, as the caller", async () => {
    const { service, calls, reads } = similarService();
    const response = await service.similar(
      caller,
      similarRequestSchema.parse({ documentId: 'd1', filter: { tags: 'guide' }, topK: 5 }),
      ['u:ann'],
    );
    // Read first (the ACL and the version), then every chunk of that version asked for.
    expect(reads[0]).toEqual({ token: 'tok', id: 'd1' });
    expect(calls.fetchVectors[0]!.chunks.map((c) => c.chunkIndex)).toEqual([0, 1, 2, 3]);
    const { query } = calls.query[0]!;
    expect(query.vector[0]).toBeCloseTo(Math.SQRT1_2);
    expect(query).toMatchObject({
      principals: ['u:ann'],
      topK: 5,
      // The caller's filter, the document itself excluded, inactive documents excluded.
      filter: {
        kind: 'and',
        children: [
          {
            kind: 'and',
            children: [
              { kind: 'compare', field: { kind: 'tags' } },
              { kind: 'compare', field: { kind: 'document_id' }, operator: '$ne', value: 'd1' },
            ],
          },
          activeOnly(undefined),
        ],
      },
    });
    expect(response.hits.map((h) => [h.documentId, h.chunkIndex])).toEqual([
      ['d2', 0],
      ['d2', 1],
      ['d3', 0],
    ]);
    expect(response.hits[0]).toMatchObject({ tags: ['guide'], page: 1, strategies: ['semantic'] });
  });

  it('groups by document, asking for more chunks to fill the documents wanted', async () => {
    const { service, calls } = similarService();
    const response = await service.similar(
      caller,
      similarRequestSchema.parse({ text: 'onboarding', unit: 'documents', topK: 2 }),
      undefined,
    );
    expect(calls.query[0]!.query.topK).toBe(10);
    // No filter of the caller's: only the one that keeps inactive documents out.
    expect(calls.query[0]!.query.filter).toEqual(activeOnly(undefined));
    expect(response).toMatchObject({ unit: 'documents', details: 'applied' });
    expect(response.hits.map((h) => h.documentId)).toEqual(['d2', 'd3']);
  });

  it('is 404 for a document the caller cannot read, and 409 for one without vectors', async () => {
    const { service } = similarService({ storedChunks: 0 });
    await expect(
      service.similar(caller, similarRequestSchema.parse({ documentId: 'nope' }), undefined),
    ).rejects.toMatchObject({ kind: 'not_found' });
    await expect(
      service.similar(caller, similarRequestSchema.parse({ documentId: 'd1' }), undefined),
    ).rejects.toMatchObject({ kind: 'failed_precondition', code: 'similar_source_not_indexed' });
  });

  it('needs exactly one of text and documentId', () => {
    expect(similarRequestSchema.safeParse({}).success).toBe(false);
    expect(similarRequestSchema.safeParse({ text: 'a', documentId: 'd1' }).success).toBe(false);
  });

  it('averages unit vectors into a unit vector', () => {
    expect(
      centroid([
        [1, 0],
        [0, 1],
      ]).map((x) => x.toFixed(4)),
    ).toEqual(['0.7071', '0.7071']);
  });
});
