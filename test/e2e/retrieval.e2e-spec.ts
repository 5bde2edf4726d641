/**
 * Retrieval behaviour agents rely on: the result cache and its invalidation, context for prompts,
 * and degraded answers when the vector store is unreachable.
 */
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { status } from '@grpc/grpc-js';

import {
  grpcGetDocument,
  grpcListDocuments,
  grpcRetrieveContext,
  grpcSearch,
  kbClient,
} from '../support/grpc-client';
import { startService, stopServices, waitReady } from '../support/services';
import { MISSIONS_DOCUMENT, testToken, useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(240_000);

describe('retrieval', () => {
  const suite = useSuite('retrieval', 4400);

  beforeAll(async () => {
    const response = await suite.upload('missions.md', MISSIONS_DOCUMENT, 'text/markdown');
    const { id } = (await response.json()) as { id: string };
    await waitFor(
      () => suite.getDocument(id),
      (d) => d.status === 'indexed',
      120_000,
    );
  });

  it('fuses adaptively by default; fixed-α convex and RRF stay selectable, an unknown rule is refused', async () => {
    const search = async (fusion?: string) =>
      fetch(`${suite.queryUrl}/v1/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(await suite.auth()) },
        body: JSON.stringify({ query: 'Hohmann transfer between orbits', topK: 5, fusion }),
      });
    type Body = { hits: Array<{ text: string; score: number; strategies: string[] }> };
    const byDefault = (await (await search()).json()) as Body;
    const adaptive = (await (await search('adaptive')).json()) as Body;
    expect(byDefault.hits.map((h) => [h.text, h.score])).toEqual(
      adaptive.hits.map((h) => [h.text, h.score]),
    );
    expect(byDefault.hits[0]!.text).toContain('Hohmann transfer');
    expect(byDefault.hits[0]!.strategies).toEqual(expect.arrayContaining(['semantic', 'lexical']));
    // Convex-combination scores lie in [0, 1] whatever α is.
    for (const hit of byDefault.hits) expect(hit.score).toBeLessThanOrEqual(1);
    for (const fusion of ['convex', 'rrf']) {
      const response = await search(fusion);
      expect(response.status).toBe(200);
      expect(((await response.json()) as Body).hits[0]!.text).toContain('Hohmann transfer');
    }
    const unknown = await search('borda');
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({
      error: { code: 'invalid_argument', message: expect.stringMatching(/fusion/) },
    });
  });

  it('feeds the best hits\u2019 terms back to BM25 by default (RM3): a chunk without the query words is found lexically too', async () => {
    const response = await fetch(`${suite.queryUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ query: 'Hohmann transfer', topK: 5 }),
    });
    expect(response.status).toBe(200);
    type Body = { hits: Array<{ text: string; strategies: string[] }> };
    const { hits } = (await response.json()) as Body;
    expect(hits[0]!.text).toContain('Hohmann transfer');
    // The aerobraking notes share no word with the query, only "orbit" with the Hohmann chunk:
    // plain BM25 cannot find them; the second, expanded BM25 pass does.
    const aerobraking = hits.find((h) => h.text.includes('Venus'));
    expect(aerobraking).toBeDefined();
    expect(aerobraking!.text).not.toMatch(/hohmann|transfer/i);
    expect(aerobraking!.strategies).toEqual(expect.arrayContaining(['semantic', 'lexical']));
    const lexicalOnly = await fetch(`${suite.queryUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ query: 'Hohmann transfer', topK: 5, mode: 'lexical' }),
    });
    const plain = (await lexicalOnly.json()) as Body;
    expect(plain.hits.some((h) => h.text.includes('Venus'))).toBe(false);
  });

  it('serves a repeated search from the cache until the index changes', async () => {
    const search = async () => {
      const response = await fetch(`${suite.queryUrl}/v1/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(await suite.auth()) },
        body: JSON.stringify({ query: 'Bright comets and their tails', topK: 3 }),
      });
      return (await response.json()) as { cache: string; hits: Array<{ text: string }> };
    };
    const first = await search();
    const second = await search();
    expect([first.cache, second.cache]).toEqual(['miss', 'hit']);
    expect(second.hits).toEqual(first.hits);

    const upload2 = await suite.upload(
      'comets.txt',
      'Bright comets grow long tails of dust and gas near the Sun.',
      'text/plain',
    );
    const { id } = (await upload2.json()) as { id: string };
    await waitFor(
      () => suite.getDocument(id),
      (d) => d.status === 'indexed',
      60_000,
    );
    const afterIndexing = await search();
    expect(afterIndexing.cache).toBe('miss');
    expect(afterIndexing.hits[0]!.text).toContain('Bright comets');

    // Prometheus scrape endpoints carry the suite's metrics.
    const queryMetrics = await (await fetch(`${suite.queryUrl}/metrics`)).text();
    expect(queryMetrics).toMatch(/kb_search_requests_total\{[^}]*cache="hit"[^}]*\} [1-9]/);
    expect(queryMetrics).toMatch(/kb_search_duration_ms_bucket/);
    const indexingMetrics = await (
      await fetch(`http://127.0.0.1:${suite.ports['indexing-service']!.port}/metrics`)
    ).text();
    expect(indexingMetrics).toMatch(/kb_chunks_indexed_total(\{[^}]*\})? [1-9]/);
  });

  it('retrieves context for a question within the token budget, with citations', async () => {
    const client = kbClient(`127.0.0.1:${suite.ports['query-service']!.grpcPort}`);
    const context = await grpcRetrieveContext(client, suite.token, {
      question: 'How did the orbiter slow down at Venus without propellant?',
      tokenBudget: 400,
      candidates: 10,
    });
    client.close();
    expect(context.tokensUsed).toBeLessThanOrEqual(400);
    expect(context.passages.length).toBeGreaterThan(0);
    expect(context.passages.map((p) => p.citation)).toEqual(context.passages.map((_, i) => i + 1));
    const venus = context.passages.find((p) => p.text.includes('forty-one times'));
    expect(venus).toMatchObject({ documentVersion: 1, title: 'title of missions.md' });
    expect(MISSIONS_DOCUMENT.slice(venus!.startOffset, venus!.endOffset)).toBe(venus!.text); // blank lines restored

    const rest = await fetch(`${suite.queryUrl}/v1/context`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ question: 'deep-space antenna size', tokenBudget: 10 }),
    });
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({
      error: { code: 'invalid_argument', message: expect.stringMatching(/tokenBudget/) },
    });

    const tool = (await (
      await fetch(`${suite.queryUrl}/v1/tools/search_knowledge_base`)
    ).json()) as {
      type: string;
      function: {
        name: string;
        parameters: { required: string[]; properties: Record<string, unknown> };
      };
    };
    expect(tool).toMatchObject({ type: 'function', function: { name: 'search_knowledge_base' } });
    expect(tool.function.parameters.required).toEqual(['query']);
    expect(Object.keys(tool.function.parameters.properties)).toEqual(
      expect.arrayContaining(['query', 'topK', 'mode', 'filter', 'knowledgeBaseIds', 'offset']),
    );
    const openapi = (await (await fetch(`${suite.queryUrl}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    expect(openapi.openapi).toBe('3.0.3');
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining(['/v1/search', '/v1/context', '/v1/tools/search_knowledge_base']),
    );
  });

  describe('filters, knowledge bases and documents', () => {
    const ids: Record<'saturn' | 'jupiter', string> = { saturn: '', jupiter: '' };
    const client = () => kbClient(`127.0.0.1:${suite.ports['query-service']!.grpcPort}`);

    beforeAll(async () => {
      for (const id of ['kb-a', 'kb-b', 'kb-c']) {
        const created = await fetch(`${suite.documentUrl}/v1/knowledge-bases`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(await suite.auth()) },
          body: JSON.stringify({ id, name: id }),
        });
        expect(created.status).toBe(201);
      }
      const uploads = {
        saturn: await suite.upload(
          'saturn.txt',
          'Giant planet moons: Titan orbits Saturn inside a thick nitrogen atmosphere.',
          'text/plain',
          suite.tenant,
          { tags: ['planets', 'outer'], knowledgeBaseIds: ['kb-a'], metadata: { year: 2024 } },
        ),
        jupiter: await suite.upload(
          'jupiter.txt',
          'Giant planet moons: Europa orbits Jupiter with an ocean under its ice.',
          'text/plain',
          suite.tenant,
          { tags: ['moons'], knowledgeBaseIds: ['kb-b'], metadata: { year: 2020 } },
        ),
      };
      for (const key of ['saturn', 'jupiter'] as const) {
        ids[key] = ((await uploads[key].json()) as { id: string }).id;
        await waitFor(
          () => suite.getDocument(ids[key]),
          (d) => d.status === 'indexed',
          60_000,
        );
      }
    });

    const documentsFound = (hits: Array<{ documentId: string }>) =>
      [...new Set(hits.map((h) => h.documentId))].filter((id) => Object.values(ids).includes(id));

    it('applies the filter and the knowledge-base scope over REST and gRPC', async () => {
      const query = 'Giant planet moons';
      expect(
        documentsFound((await suite.search({ query, filter: { tags: 'planets' } })).hits),
      ).toEqual([ids.saturn]);
      expect(
        documentsFound((await suite.search({ query, knowledgeBaseIds: ['kb-b'] })).hits),
      ).toEqual([ids.jupiter]);
      expect(
        documentsFound(
          (await suite.search({ query, mode: 'lexical', filter: { tags: { $nin: ['planets'] } } }))
            .hits,
        ),
      ).toEqual([ids.jupiter]);
      const grpc = client();
      const response = await grpcSearch(grpc, suite.token, {
        query,
        filter: { 'metadata.year': { $gte: 2022 } },
        topK: 5,
      });
      expect(documentsFound(response.hits)).toEqual([ids.saturn]);
      await expect(
        grpcSearch(grpc, suite.token, { query, filter: { 'metadata.year': { $like: 1 } } }),
      ).rejects.toMatchObject({
        code: status.INVALID_ARGUMENT,
        details: expect.stringMatching(/\$like/),
      });
      grpc.close();

      const bad = await suite.search({ query, filter: { $or: [{ owner: 'me' }] } });
      expect(bad.error).toMatchObject({
        code: 'invalid_argument',
        message: expect.stringContaining('filter at $or[0].owner: unknown field "owner"'),
      });
    });

    it('reads one document and pages through the tenant’s documents over gRPC', async () => {
      const grpc = client();
      const { document } = await grpcGetDocument(grpc, suite.token, ids.saturn);
      expect(document).toMatchObject({
        id: ids.saturn,
        status: 'indexed',
        tags: ['planets', 'outer'],
        knowledgeBaseIds: ['kb-a'],
        metadata: { year: 2024 },
      });
      await expect(
        grpcGetDocument(
          grpc,
          await testToken({ tenant: 'another-tenant', user: 'tester' }),
          ids.saturn,
        ),
      ).rejects.toMatchObject({
        code: status.NOT_FOUND,
      });
      await expect(grpcGetDocument(grpc, suite.token, 'not-a-uuid')).rejects.toMatchObject({
        code: status.INVALID_ARGUMENT,
      });
      const first = await grpcListDocuments(grpc, suite.token, { pageSize: 1 });
      expect(first.documents).toHaveLength(1);
      expect(first.nextPageToken).not.toBe('');
      const second = await grpcListDocuments(grpc, suite.token, {
        pageSize: 1,
        pageToken: first.nextPageToken,
      });
      expect(second.documents[0]!.id).not.toBe(first.documents[0]!.id);
      grpc.close();
    });

    it('edits tags and knowledge bases without a new version or re-embedding', async () => {
      const before = await suite.getDocument(ids.saturn);
      const vectorsBefore = await suite.vectors.fetchVectors(suite.tenant, [
        { documentId: ids.saturn, documentVersion: 1, chunkIndex: 0 },
      ]);
      const response = await fetch(`${suite.documentUrl}/v1/documents/${ids.saturn}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', ...(await suite.auth()) },
        body: JSON.stringify({ tags: ['ringed'], knowledge_base_ids: ['kb-c'] }),
      });
      expect(response.status).toBe(200);
      const query = 'Giant planet moons';
      const after = await waitFor(
        () => suite.search({ query, filter: { tags: 'ringed' } }),
        (r) => documentsFound(r.hits).includes(ids.saturn),
        15_000,
      );
      expect(documentsFound(after.hits)).toEqual([ids.saturn]);
      expect(
        documentsFound((await suite.search({ query, filter: { tags: 'planets' } })).hits),
      ).toEqual([]);
      expect(
        documentsFound((await suite.search({ query, knowledgeBaseIds: ['kb-c'] })).hits),
      ).toEqual([ids.saturn]);
      const now = await suite.getDocument(ids.saturn);
      expect(now).toMatchObject({ version: 1, status: 'indexed', tags: ['ringed'] });
      expect(now['stageTimes']).toEqual(before['stageTimes']); // no pipeline run
      expect(
        await suite.vectors.fetchVectors(suite.tenant, [
          { documentId: ids.saturn, documentVersion: 1, chunkIndex: 0 },
        ]),
      ).toEqual(vectorsBefore);
      const empty = await fetch(`${suite.documentUrl}/v1/documents/${ids.saturn}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', ...(await suite.auth()) },
        body: JSON.stringify({ title: 'not editable here' }),
      });
      expect(empty.status).toBe(400);
    });

    it('stops serving a deleted document, cached results included', async () => {
      const query = { query: 'Europa ocean under ice', topK: 5 };
      await suite.search(query);
      const cached = await suite.search(query);
      expect(cached.cache).toBe('hit');
      expect(documentsFound(cached.hits)).toContain(ids.jupiter);
      const deleted = await fetch(`${suite.documentUrl}/v1/documents/${ids.jupiter}`, {
        method: 'DELETE',
        headers: await suite.auth(),
      });
      expect(deleted.status).toBe(200);
      const after = await waitFor(
        () => suite.search(query),
        (r) => !documentsFound(r.hits).includes(ids.jupiter),
        30_000,
      );
      expect(after.cache).toBe('miss');
    });
  });

  it('answers with BM25 results marked degraded when the vector store is unreachable', async () => {
    const { REDIS_URL: _noCache, ...withoutCache } = suite.env;
    const degradedEnv = {
      ...withoutCache,
      VECTOR_DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:1/postgres',
    };
    const logDir = join(process.env['KB_LOG_DIR'] ?? tmpdir(), 'e2e-retrieval-degraded');
    mkdirSync(logDir, { recursive: true });
    const service = startService('query-service', {
      env: degradedEnv,
      // Its own log, so a failed boot can be read afterwards.
      logDir,
      ports: {
        'query-service': { port: 4112, grpcPort: 20152 },
        'acl-service': suite.ports['acl-service']!,
        'document-service': suite.ports['document-service']!,
      },
    });
    try {
      await waitReady([service], 120_000);
      const response = await fetch('http://127.0.0.1:4112/v1/search', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(await suite.auth()) },
        body: JSON.stringify({ query: 'Hohmann transfer between orbits', topK: 3 }),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        degraded: boolean;
        degradedReason: string;
        hits: Array<{ text: string; strategies: string[] }>;
      };
      expect(body).toMatchObject({ degraded: true, degradedReason: 'vector_search_unavailable' });
      expect(body.hits[0]!.text).toContain('Hohmann transfer');
      expect(body.hits.every((h) => h.strategies.join() === 'lexical')).toBe(true);
    } finally {
      await stopServices([service]);
    }
  });
});
