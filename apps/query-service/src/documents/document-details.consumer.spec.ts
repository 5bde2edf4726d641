import { documentIdsOf } from './document-details.consumer';

const id = '00000000-0000-4000-8000-000000000001';
const id2 = '00000000-0000-4000-8000-000000000002';

describe('documentIdsOf', () => {
  it('names the documents of every kind of kb.document.v1 event', () => {
    expect(documentIdsOf({ kind: 'deleted', documentId: id })).toEqual([id]);
    expect(documentIdsOf({ kind: 'acl_changed', documentId: id, principals: [] })).toEqual([id]);
    expect(
      documentIdsOf({
        kind: 'attributes_changed',
        documentId: id,
        attributes: { knowledgeBaseIds: [], tags: [], metadata: {} },
        spaces: [],
      }),
    ).toEqual([id]);
    expect(
      documentIdsOf({
        kind: 'documents_removed',
        documentIds: [id, id2],
        knowledgeBaseId: 'kb',
        cause: 'emptied',
        jobId: id,
        batch: 0,
        batches: 1,
      }),
    ).toEqual([id, id2]);
    expect(
      documentIdsOf({
        kind: 'access_snapshot',
        documents: [{ documentId: id2, metaVersion: 1, principals: [] }],
      }),
    ).toEqual([id2]);
  });
});
