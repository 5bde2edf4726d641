/**
 * The walking skeleton, end to end: six services as separate processes on real Kafka, Postgres,
 * S3, pgvector and the real embedding model. One Markdown upload must pass every hop and become
 * searchable over gRPC and REST; one trace must follow it.
 */
import { createHash, randomUUID } from 'node:crypto';

import { kbv1, parsedDocumentSchema, Topics } from '@kb/contracts';
import { createKafka, ensureTopics } from '@kb/kafka';
import type { Consumer } from 'kafkajs';
import { Client } from 'pg';

import { grpcSearch, kbClient } from '../support/grpc-client';
import { MISSIONS_DOCUMENT, testToken, useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(240_000);

interface Observed {
  topic: string;
  key: string;
  value: { type: string; tenantId: string; payload: Record<string, unknown> };
}

describe('walking skeleton: upload → parse → embed → index → search', () => {
  const suite = useSuite('e2e', 4100);
  let observer: Consumer;
  const observed: Observed[] = [];

  beforeAll(async () => {
    const kafka = createKafka({ brokers: suite.env['KAFKA_BROKERS']!.split(','), clientId: 'e2e' });
    // The observer's group starts at each topic's end: it sees what this suite makes, not the
    // broker's whole history of earlier runs.
    const groupId = `e2e-observer-${randomUUID()}`;
    const admin = kafka.admin();
    await admin.connect();
    try {
      await ensureTopics(kafka, Object.values(Topics));
      for (const topic of Object.values(Topics)) {
        await admin.resetOffsets({ groupId, topic, earliest: false });
      }
    } finally {
      await admin.disconnect();
    }
    observer = kafka.consumer({ groupId });
    await observer.connect();
    await observer.subscribe({ topics: Object.values(Topics) });
    await observer.run({
      eachMessage: async ({ topic, message }) => {
        observed.push({
          topic,
          key: message.key?.toString() ?? '',
          value: JSON.parse(message.value?.toString() ?? '{}') as Observed['value'],
        });
      },
    });
  });

  afterAll(async () => {
    await observer?.disconnect();
  });

  it('indexes an uploaded Markdown file and finds its chunk over gRPC and REST', async () => {
    const uploadedAt = Date.now();
    const response = await suite.upload('missions.md', MISSIONS_DOCUMENT, 'text/markdown');
    expect(response.status).toBe(202);
    const created = (await response.json()) as { id: string; status: string; sha256: string };
    expect(created.status).toBe('pending');
    const sha256 = createHash('sha256').update(MISSIONS_DOCUMENT).digest('hex');
    expect(created.sha256).toBe(sha256);

    const indexed = await waitFor(
      () => suite.getDocument(created.id),
      (d) => ['indexed', 'failed'].includes(d.status),
      120_000,
    );
    const indexedAfterMs = Date.now() - uploadedAt;
    expect(indexed).toMatchObject({
      status: 'indexed',
      failure: null,
      version: 1,
      title: 'title of missions.md',
    });
    const stageTimes = indexed['stageTimes'] as Record<string, string>;
    expect(Object.keys(stageTimes).sort()).toEqual([
      'embedding',
      'indexed',
      'indexing',
      'parsing',
      'pending',
    ]);
    const chunkCount = indexed['chunkCount'] as number;
    expect(chunkCount).toBeGreaterThanOrEqual(2);
    process.stdout.write(`upload → indexed in ${indexedAfterMs} ms (${chunkCount} chunks)\n`);

    // S3: the original, content-addressed, and the parse output by reference.
    expect((await suite.blobs.get(`blobs/${suite.tenant}/sha256/${sha256}`)).toString()).toBe(
      MISSIONS_DOCUMENT,
    );
    // Postgres: the document row, owned by document-service.
    const pg = new Client({ connectionString: suite.env['DATABASE_URL'] });
    await pg.connect();
    const { rows } = await pg.query(
      'SELECT status, tenant_id, chunk_count FROM document_service.documents WHERE id = $1',
      [created.id],
    );
    await pg.end();
    expect(rows).toEqual([{ status: 'indexed', tenant_id: suite.tenant, chunk_count: chunkCount }]);
    // Vectors: exactly one per chunk in the tenant's namespace.
    expect(await suite.vectors.countDocument(suite.tenant, created.id)).toBe(chunkCount);

    // Kafka: every pipeline topic carried this document's event, keyed by its id.
    const pipelineTopics = [
      Topics.document,
      Topics.documentParsed,
      Topics.chunksEmbedded,
      Topics.documentStatus,
    ];
    const events = await waitFor(
      // The pipeline's topics only: the audit topic carries this document's records too.
      async () =>
        observed.filter(
          (o) => o.key === created.id && (pipelineTopics as string[]).includes(o.topic),
        ),
      (list) =>
        new Set(list.map((o) => o.topic)).size === pipelineTopics.length &&
        list.some(
          (o) => o.topic === Topics.documentStatus && o.value.payload['status'] === 'indexed',
        ),
      30_000,
    );
    expect(new Set(events.map((e) => e.topic))).toEqual(new Set(pipelineTopics));
    expect(events.every((e) => e.value.tenantId === suite.tenant)).toBe(true);
    const statuses = events
      .filter((e) => e.topic === Topics.documentStatus)
      .map((e) => e.value.payload['status']);
    expect(statuses).toEqual(['parsing', 'embedding', 'indexing', 'indexed']);
    // A small document's chunks and vectors travel in the events themselves (ADR 4).
    const parsedEvent = events.find((e) => e.topic === Topics.documentParsed)!;
    const embeddedEvent = events.find((e) => e.topic === Topics.chunksEmbedded)!;
    expect(Object.keys(embeddedEvent.value.payload['embeddings'] as object)).toEqual(['inline']);
    const parsed = parsedDocumentSchema.parse(
      (parsedEvent.value.payload['chunks'] as { inline: unknown }).inline,
    );
    expect(parsed.chunks).toHaveLength(chunkCount);
    const venusChunk = parsed.chunks.find((c) => c.text.includes('forty-one times'))!;
    expect(MISSIONS_DOCUMENT.slice(venusChunk.start, venusChunk.end)).toBe(venusChunk.text);

    // gRPC Search returns the chunk that answers the question first.
    const client = kbClient(`127.0.0.1:${suite.ports['query-service']!.grpcPort}`);
    const grpc = await grpcSearch(client, suite.token, {
      query: 'How many times did the orbiter pass through the atmosphere of Venus?',
      topK: 3,
    });
    const lexicalOnly = await grpcSearch(client, suite.token, {
      query: 'Hohmann',
      topK: 1,
      mode: kbv1.SearchMode.SEARCH_MODE_LEXICAL,
    });
    const withNeighbours = await grpcSearch(client, suite.token, {
      query: 'How many times did the orbiter pass through the atmosphere of Venus?',
      topK: 1,
      neighbors: 5,
    });
    client.close();
    // Radius 5 around the hit covers the whole (3-chunk) document and stops at its boundaries.
    expect(withNeighbours.hits.map((h) => [h.documentId, h.chunkIndex, h.isMatch])).toEqual(
      parsed.chunks.map((c) => [created.id, c.index, c.index === venusChunk.index]),
    );
    expect(lexicalOnly.hits).toHaveLength(1);
    expect(lexicalOnly.hits[0]).toMatchObject({ documentId: created.id, strategies: ['lexical'] });
    expect(lexicalOnly.hits[0]!.text).toContain('Hohmann transfer');
    expect(grpc.degraded).toBe(false);
    expect(grpc.hits[0]!.strategies).toContain('semantic');
    expect(grpc.hits[0]).toMatchObject({
      documentId: created.id,
      documentVersion: 1,
      chunkIndex: venusChunk.index,
      text: venusChunk.text,
      startOffset: venusChunk.start,
      endOffset: venusChunk.end,
    });
    expect(grpc.hits[0]!.score).toBeGreaterThan(grpc.hits[grpc.hits.length - 1]!.score - 1e-9);

    // REST search agrees.
    const rest = await fetch(`${suite.queryUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ query: 'size of the deep-space antenna dishes', topK: 2 }),
    });
    expect(rest.status).toBe(200);
    const restBody = (await rest.json()) as { hits: Array<{ documentId: string; text: string }> };
    expect(restBody.hits[0]).toMatchObject({ documentId: created.id });
    expect(restBody.hits[0]!.text).toContain('seventy metres');
    // Where the search spent its time, per stage (a miss: the retrieval stages ran).
    const stages = (rest.headers.get('server-timing') ?? '')
      .split(', ')
      .map((s) => s.split(';')[0]);
    expect(stages).toEqual(expect.arrayContaining(['cache', 'vector', 'lexical', 'total']));
  });

  it('links one upload’s spans in every pipeline service under one trace id', async () => {
    const content = 'Tracing notes: one trace should follow this file through every service.';
    const created = (await (await suite.upload('traced.txt', content, 'text/plain')).json()) as {
      id: string;
    };
    await waitFor(
      () => suite.getDocument(created.id),
      (d) => d.status === 'indexed',
      60_000,
    );
    const pipeline = [
      'document-service',
      'parser-service',
      'embedding-service',
      'indexing-service',
    ];
    const traceSpans = await waitFor(
      async () => {
        const ids = new Set(
          suite.collector.spans
            .filter((s) => s.attributes['kb.document_id'] === created.id)
            .map((s) => s.traceId),
        );
        return suite.collector.spans.filter((s) => ids.has(s.traceId));
      },
      // Spans export in batches, a parent after its children: wait for every one this test names.
      (spans) =>
        pipeline.every((service) => spans.some((s) => s.service === service)) &&
        ['kb.parse', 'kb.embed', 'kb.index'].every((name) => spans.some((s) => s.name === name)) &&
        spans.some((s) => s.service === 'document-service' && s.parentSpanId === ''),
      30_000,
    );
    expect(new Set(traceSpans.map((s) => s.traceId)).size).toBe(1);
    const names = traceSpans.map((s) => `${s.service} ${s.name}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'parser-service kb.parse',
        'embedding-service kb.embed',
        'indexing-service kb.index',
      ]),
    );
    // The upload's own HTTP span is the root; Kafka hops hang below it.
    expect(traceSpans.some((s) => s.service === 'document-service' && s.parentSpanId === '')).toBe(
      true,
    );
  });

  it('traces a gRPC search through the cache, the query embedding, vector and BM25 search', async () => {
    // gRPC server span, the cache lookup (one MGET: the tenant's generation, the answer and the
    // query's embedding), the query embedding, then pgvector (SELECT in the vector database) and
    // two BM25 passes, each in memory or in Postgres (WITH …), docs/adr/0029.
    const searchNames = [
      'grpc.kb.v1.KnowledgeBase/Search',
      'kb.search',
      'redis-MGET',
      'redis-SET',
      'kb.embed_query',
    ];
    const vectorDatabase = new URL(process.env['VECTOR_DATABASE_URL']!).pathname.slice(1);
    const isVectorQuery = (name: string): boolean =>
      name.startsWith(`pg.query:SELECT ${vectorDatabase}`);
    const client = kbClient(`127.0.0.1:${suite.ports['query-service']!.grpcPort}`);
    // A text of this run's own: query embeddings are cached across runs by model and text.
    await grpcSearch(client, suite.token, {
      query: `spacecraft transfer orbits traced ${suite.tenant}`,
      topK: 2,
    });
    client.close();
    const searchSpans = await waitFor(
      async () => {
        // The tenant's latest search is this test's (earlier tests searched too).
        const root = suite.collector.spans.findLast(
          (s) => s.name === 'kb.search' && s.attributes['kb.tenant_id'] === suite.tenant,
        );
        return root ? suite.collector.spans.filter((s) => s.traceId === root.traceId) : [];
      },
      // Spans export in batches, a parent after its children: wait for every one this test names.
      (spans) =>
        searchNames.every((name) => spans.some((s) => s.name === name)) &&
        spans.some((s) => isVectorQuery(s.name)) &&
        spans.filter((s) => s.name === 'kb.bm25').length >= 2,
      30_000,
    );
    const names = searchSpans.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(searchNames));
    // The miss asked Redis once before the model: no GET of its own for the embedding.
    expect(names.filter((name) => name === 'redis-MGET')).toHaveLength(1);
    expect(names).not.toContain('redis-GET');
    // One vector query and two BM25 passes, the second with the RM3 feedback terms (ADR 28). The
    // first search at a generation runs BM25 in Postgres while the snapshot is built, so each
    // pass is in memory or a query of its own.
    expect(names.filter(isVectorQuery)).toHaveLength(1);
    const passes = searchSpans.filter((s) => s.name === 'kb.bm25');
    expect(passes).toHaveLength(2);
    for (const pass of passes) expect(['memory', 'index']).toContain(pass.attributes['kb.lexical']);
    expect(names.filter((name) => name.startsWith('pg.query:WITH'))).toHaveLength(
      passes.filter((s) => s.attributes['kb.lexical'] === 'index').length,
    );
    // The caller's principals come from acl-service (when not cached) inside the same trace.
    // What consumers do with the search's own events (its audit record: acl-service keeps it,
    // document-service counts usage) joins the trace later, under a `<topic> process` span.
    const byId = new Map(searchSpans.map((s) => [s.spanId, s]));
    const consumed = (span: (typeof searchSpans)[number] | undefined): boolean =>
      span !== undefined &&
      (span.name.endsWith(' process') || consumed(byId.get(span.parentSpanId)));
    const synchronous = searchSpans.filter((s) => !consumed(s));
    expect(
      synchronous
        .filter((s) => !['query-service', 'acl-service'].includes(s.service))
        .map((s) => `${s.service}: ${s.name}`),
    ).toEqual([]);
  });

  it('does not show one tenant’s chunks to another', async () => {
    const client = kbClient(`127.0.0.1:${suite.ports['query-service']!.grpcPort}`);
    const other = await grpcSearch(
      client,
      await testToken({ tenant: `${suite.tenant}-other`, user: 'tester', roles: ['admin'] }),
      {
        query: 'Venus atmosphere',
        topK: 5,
      },
    );
    client.close();
    expect(other.hits).toEqual([]);
  });

  it('marks an unsupported file failed with a reason code instead of dropping it', async () => {
    // A GIF: images are read through OCR (ADR 50), but only PNG, JPEG, TIFF and WebP.
    const response = await suite.upload(
      'animation.gif',
      Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'),
      'image/gif',
    );
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const failed = await waitFor(
      () => suite.getDocument(id),
      (d) => ['indexed', 'failed'].includes(d.status),
      60_000,
    );
    expect(failed).toMatchObject({ status: 'failed', failure: { reason: 'unsupported_type' } });
  });

  it('answers bad requests with a status, a stable code and a message', async () => {
    const noTenant = await suite.upload('a.txt', 'hello', 'text/plain', '');
    expect(noTenant.status).toBe(401);
    expect(await noTenant.json()).toMatchObject({ error: { code: 'unauthenticated' } });

    const empty = await suite.upload('empty.txt', '', 'text/plain');
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ error: { code: 'empty_file' } });

    const missing = await fetch(`${suite.documentUrl}/v1/documents/${randomUUID()}`, {
      headers: await suite.auth(),
    });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'document_not_found' } });

    const badSearch = await fetch(`${suite.queryUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ query: '', topK: 1000 }),
    });
    expect(badSearch.status).toBe(400);
    const body = (await badSearch.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('invalid_argument');
    expect(body.error.message).toMatch(/query/);
    expect(body.error.message).toMatch(/topK/);

    const client = kbClient(`127.0.0.1:${suite.ports['query-service']!.grpcPort}`);
    await expect(grpcSearch(client, '', { query: 'x' })).rejects.toMatchObject({ code: 16 });
    await expect(grpcSearch(client, suite.token, { query: '   ' })).rejects.toMatchObject({
      code: 3,
    });
    client.close();
  });
});
