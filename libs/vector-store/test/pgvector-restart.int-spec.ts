import { randomUUID } from 'node:crypto';

import { toIndexSpace } from '@kb/contracts';

import { PgVectorStore } from '../src';
import { DIM } from './support/conformance';

jest.setTimeout(60_000);

/**
 * indexing-service restarted and a document's delete, ACL or attribute change arrives before any
 * vectors do: its store has not been told a dimension yet, and must still reach the document's
 * vectors (they were refused with "ensureReady() was not called" and retried until dead-lettered,
 * which left a deleted document's vectors behind).
 */
describe('PgVectorStore before it has indexed anything', () => {
  const writer = new PgVectorStore({ url: process.env['VECTOR_DATABASE_URL']! });
  const restarted = new PgVectorStore({ url: process.env['VECTOR_DATABASE_URL']! });
  beforeAll(() => writer.ensureReady(DIM));
  afterAll(() => Promise.all([writer.close(), restarted.close()]));

  const space = toIndexSpace(`restart-${randomUUID().slice(0, 8)}`);
  const attributes = { knowledgeBaseIds: ['kb'], tags: [], metadata: {}, uploadedAt: 0 };
  const vector = Array.from({ length: DIM }, (_, i) => (i === 0 ? 1 : 0));

  it('changes ACLs and attributes in place and deletes the document, in whichever table holds it', async () => {
    const documentId = randomUUID();
    await writer.upsert(space, [
      {
        documentId,
        documentVersion: 1,
        chunkIndex: 0,
        vector,
        title: 't',
        text: 'a chunk',
        startOffset: 0,
        endOffset: 7,
        attributes: { ...attributes, principals: ['user:ann'] },
      },
    ]);
    expect(restarted.isReady()).toBe(false);
    await expect(restarted.setPrincipals(space, documentId, ['user:bob'])).resolves.toBe(1);
    await expect(
      restarted.setAttributes(space, documentId, { ...attributes, tags: ['x'] }),
    ).resolves.toBe(1);
    await expect(restarted.deleteDocument(space, documentId)).resolves.toBe(1);
    await expect(writer.countDocument(space, documentId)).resolves.toBe(0);
  });

  it('touches nothing of another document or namespace', async () => {
    await expect(restarted.deleteDocument(space, randomUUID())).resolves.toBe(0);
  });
});
