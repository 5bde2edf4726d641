/**
 * Hybrid search with VECTOR_STORE=pinecone: indexing-service and query-service as OS processes
 * against two FAKE Pinecone data planes in this test (libs/vector-store/test/support: a dense
 * cosine index and a sparse index), so both halves of a search are served by "Pinecone" and
 * PostgreSQL keeps the chunk rows only (docs/adr/0057). Real Pinecone cannot run here.
 */
import { FakePineconeDataPlane } from '@kb/vector-store/test/support/fake-pinecone';

import { MISSIONS_DOCUMENT, useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(240_000);

describe('hybrid search served by Pinecone (FAKE dense and sparse indexes)', () => {
  const dense = new FakePineconeDataPlane();
  const sparse = new FakePineconeDataPlane({ vectorType: 'sparse' });
  const hosts = { dense: '', sparse: '' };
  // Registered before the suite's own beforeAll, so the fakes listen before the services start.
  beforeAll(async () => {
    hosts.dense = await dense.start();
    hosts.sparse = await sparse.start();
  });
  afterAll(async () => {
    await dense.stop();
    await sparse.stop();
  });
  const suite = useSuite('pinecone', 9100, () => ({
    VECTOR_STORE: 'pinecone',
    PINECONE_API_KEY: 'fake-key',
    PINECONE_INDEX_HOST: hosts.dense,
    PINECONE_SPARSE_INDEX_HOST: hosts.sparse,
  }));
  let documentId = '';

  beforeAll(async () => {
    // Shared with nobody: only the uploader reads it.
    const response = await suite.upload(
      'missions.md',
      MISSIONS_DOCUMENT,
      'text/markdown',
      suite.tenant,
      { acl: { users: [], groups: [], roles: [], tenant: false } },
    );
    documentId = ((await response.json()) as { id: string }).id;
    await waitFor(
      () => suite.getDocument(documentId),
      (d) => d.status === 'indexed',
      120_000,
    );
  });

  // Counted in the suite's tenant only: the services may also consume other suites' leftover
  // events from the shared Kafka (their consumer groups are the default ones).
  it('writes every chunk to both indexes', () => {
    expect(sparse.size(suite.tenant)).toBeGreaterThan(0);
    expect(sparse.size(suite.tenant)).toBe(dense.size(suite.tenant));
  });

  it('fuses a semantic list from the dense index and a lexical one from the sparse index', async () => {
    const queries = () => sparse.requests.filter((r) => r === 'POST /query').length;
    const before = queries();
    const hybrid = await suite.search({ query: 'Hohmann transfer between orbits', topK: 5 });
    expect(hybrid.degraded).toBe(false);
    expect(hybrid.hits[0]!.text).toContain('Hohmann transfer');
    expect(hybrid.hits[0]!.strategies).toEqual(expect.arrayContaining(['semantic', 'lexical']));
    expect(queries()).toBeGreaterThan(before);
    const lexical = await suite.search({ query: 'aerobraking Venus', mode: 'lexical', topK: 3 });
    expect(lexical.hits[0]!.text).toContain('Venus');
    expect(lexical.hits[0]!.strategies).toEqual(['lexical']);
    // Typed syntax is checked against the chunk rows: a phrase that no chunk holds finds nothing.
    const phrase = await suite.search({ query: '"Venus transfer"', mode: 'lexical', topK: 3 });
    expect(phrase.hits).toEqual([]);
  });

  it('a caller the document is not shared with finds nothing in either index', async () => {
    const response = await fetch(`${suite.queryUrl}/v1/search`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(await suite.auth({ user: 'stranger', roles: ['reader'] })),
      },
      body: JSON.stringify({ query: 'Hohmann transfer aerobraking', topK: 5 }),
    });
    expect(((await response.json()) as { hits: unknown[] }).hits).toEqual([]);
  });

  it('a delete removes the chunks from both indexes', async () => {
    const deleted = await fetch(`${suite.documentUrl}/v1/documents/${documentId}`, {
      method: 'DELETE',
      headers: await suite.auth(),
    });
    expect(deleted.status).toBe(200);
    await waitFor(
      async () => [dense.size(suite.tenant), sparse.size(suite.tenant)],
      (sizes) => sizes.every((n) => n === 0),
      60_000,
    );
    const lexical = await suite.search({ query: 'aerobraking Venus', mode: 'lexical', topK: 3 });
    expect(lexical.hits).toEqual([]);
  });
});
