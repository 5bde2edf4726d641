/**
 * The walking skeleton, end to end: six services as separate processes on real Kafka, Postgres,
 * S3, pgvector and the real embedding model. One Markdown upload must pass every hop and become
 * searchable over gRPC and REST.
 */
import { Topics, kbv1, parsedDocumentSchema } from '@kb/contracts';
import { createKafka } from '@kb/kafka';
import { S3BlobStore } from '@kb/storage';
import { PgVectorStore } from '@kb/vector-store';
import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Consumer } from 'kafkajs';
import { Client } from 'pg';
import { grpcRetrieveContext, grpcSearch, kbClient } from '../support/grpc-client';
import { OtlpCollector } from '../support/otlp-collector';
import {
  startService,
  startServices,
  stopServices,
  waitReady,
  type RunningService,
} from '../support/services';
import { waitFor } from '../support/wait';

jest.setTimeout(240_000);

const TENANT = `e2e-${randomUUID().slice(0, 8)}`;
const PORTS = {
  'document-service': { port: 4101 },
  'parser-service': { port: 4102 },
  'embedding-service': { port: 4103 },
  'indexing-service': { port: 4104 },
  'query-service': { port: 4105, grpcPort: 50151 },
  'acl-service': { port: 4106 },
};
const DOCUMENT = [
  '# Field notes on interplanetary missions',
  '',
  '## Transfers',
  'A Hohmann transfer moves a spacecraft between two circular orbits with two engine burns. ' +
    'It is the most fuel-efficient two-impulse manoeuvre between coplanar orbits.',
  '',
  '## Aerobraking',
  'The orbiter dipped into the upper atmosphere of Venus forty-one times to shed velocity ' +
    'without spending propellant, lowering its orbit over several months.',
  '',
  '## Communications',
  'Deep-space antennas in three continents keep contact with probes as the Earth rotates; ' +
    'each dish is seventy metres across.',
].join('\n');

interface Observed {
  topic: string;
  key: string;
  value: { type: string; tenantId: string; payload: Record<string, unknown> };
}

describe('walking skeleton: upload → parse → embed → index → search', () => {
  const env = process.env;
  let services: RunningService[] = [];
  let observer: Consumer;
  const collector = new OtlpCollector();
  const observed: Observed[] = [];
  const blobs = new S3BlobStore({
    endpoint: env['S3_ENDPOINT'],
    region: env['S3_REGION'] ?? 'us-east-1',
    bucket: env['S3_BUCKET'] ?? 'kb-documents',
    accessKeyId: env['S3_ACCESS_KEY_ID'],
    secretAccessKey: env['S3_SECRET_ACCESS_KEY'],
  });
  const vectors = new PgVectorStore({ url: env['VECTOR_DATABASE_URL']! });
  const documentUrl = `http://127.0.0.1:${PORTS['document-service'].port}`;
  const queryUrl = `http://127.0.0.1:${PORTS['query-service'].port}`;

  beforeAll(async () => {
    const logDir = join(env['KB_HOME'] ?? '/tmp', 'logs', 'e2e');
    mkdirSync(logDir, { recursive: true });
    const otlpEndpoint = await collector.start();
    services = startServices({
      env: {
        ...env,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint,
        CHUNK_SIZE: '300',
        CHUNK_OVERLAP: '60',
        LOG_LEVEL: 'info',
        MAX_UPLOAD_BYTES: String(1024 * 1024),
      },
      ports: PORTS,
      logDir,
    });
    await waitReady(services);
    await vectors.ensureReady(384); // all-MiniLM-L6-v2

    observer = createKafka({ brokers: env['KAFKA_BROKERS']!.split(','), clientId: 'e2e' }).consumer(
      {
        groupId: `e2e-observer-${randomUUID()}`,
      },
    );
    await observer.connect();
    await observer.subscribe({ topics: Object.values(Topics), fromBeginning: true });
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
    await stopServices(services);
    await collector.stop();
    await vectors.close();
    blobs.destroy();
  });

  const upload = async (filename: string, body: string | Buffer, type: string, tenant = TENANT) => {
    const form = new FormData();
    form.append('file', new Blob([body], { type }), filename);
    form.append('title', `title of ${filename}`);
    form.append('metadata', JSON.stringify({ source: 'e2e' }));
    return fetch(`${documentUrl}/v1/documents`, {
      method: 'POST',
      body: form,
      headers: tenant ? { 'x-tenant-id': tenant } : {},
    });
  };
  const getDocument = async (id: string) => {
    const response = await fetch(`${documentUrl}/v1/documents/${id}`, {
      headers: { 'x-tenant-id': TENANT },
    });
    return (await response.json()) as Record<string, unknown> & { status: string };
  };

  it('indexes an uploaded Markdown file and finds its chunk over gRPC and REST', async () => {
    const uploadedAt = Date.now();
    const response = await upload('missions.md', DOCUMENT, 'text/markdown');
    expect(response.status).toBe(202);
    const created = (await response.json()) as { id: string; status: string; sha256: string };
    expect(created.status).toBe('pending');
    const sha256 = createHash('sha256').update(DOCUMENT).digest('hex');
    expect(created.sha256).toBe(sha256);

    const indexed = await waitFor(
      () => getDocument(created.id),
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
    expect((await blobs.get(`blobs/sha256/${sha256}`)).toString()).toBe(DOCUMENT);
    // Postgres: the document row, owned by document-service.
    const pg = new Client({ connectionString: env['DATABASE_URL'] });
    await pg.connect();
    const { rows } = await pg.query(
      'SELECT status, tenant_id, chunk_count FROM document_service.documents WHERE id = $1',
      [created.id],
    );
    await pg.end();
    expect(rows).toEqual([{ status: 'indexed', tenant_id: TENANT, chunk_count: chunkCount }]);
    // Vectors: exactly one per chunk in the tenant's namespace.
    expect(await vectors.countDocument(TENANT, created.id)).toBe(chunkCount);

    // Kafka: every topic carried this document's event, keyed by its id.
    const events = await waitFor(
      async () => observed.filter((o) => o.key === created.id),
      (list) =>
        new Set(list.map((o) => o.topic)).size === Object.values(Topics).length &&
        list.some(
          (o) => o.topic === Topics.documentStatus && o.value.payload['status'] === 'indexed',
        ),
      30_000,
    );
    expect(new Set(events.map((e) => e.topic))).toEqual(new Set(Object.values(Topics)));
    expect(events.every((e) => e.value.tenantId === TENANT)).toBe(true);
    const statuses = events
      .filter((e) => e.topic === Topics.documentStatus)
      .map((e) => e.value.payload['status']);
    expect(statuses).toEqual(['parsing', 'embedding', 'indexing', 'indexed']);
    const parsedEvent = events.find((e) => e.topic === Topics.documentParsed)!;
    const parsed = parsedDocumentSchema.parse(
      JSON.parse(
        (await blobs.get((parsedEvent.value.payload['chunks'] as { key: string }).key)).toString(),
      ),
    );
    expect(parsed.chunks).toHaveLength(chunkCount);
    const venusChunk = parsed.chunks.find((c) => c.text.includes('forty-one times'))!;
    expect(DOCUMENT.slice(venusChunk.start, venusChunk.end)).toBe(venusChunk.text);

    // gRPC Search returns the chunk that answers the question first.
    const client = kbClient(`127.0.0.1:${PORTS['query-service'].grpcPort}`);
    const grpc = await grpcSearch(client, TENANT, {
      query: 'How many times did the orbiter pass through the atmosphere of Venus?',
      topK: 3,
    });
    const lexicalOnly = await grpcSearch(client, TENANT, {
      query: 'Hohmann',
      topK: 1,
      mode: kbv1.SearchMode.SEARCH_MODE_LEXICAL,
    });
    const withNeighbours = await grpcSearch(client, TENANT, {
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
    const rest = await fetch(`${queryUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-tenant-id': TENANT },
      body: JSON.stringify({ query: 'size of the deep-space antenna dishes', topK: 2 }),
    });
    expect(rest.status).toBe(200);
    const restBody = (await rest.json()) as { hits: Array<{ documentId: string; text: string }> };
    expect(restBody.hits[0]).toMatchObject({ documentId: created.id });
    expect(restBody.hits[0]!.text).toContain('seventy metres');
  });

  it('links one upload’s spans in every pipeline service under one trace id', async () => {
    const content = 'Tracing notes: one trace should follow this file through every service.';
    const created = (await (await upload('traced.txt', content, 'text/plain')).json()) as {
      id: string;
    };
    await waitFor(
      () => getDocument(created.id),
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
          collector.spans
            .filter((s) => s.attributes['kb.document_id'] === created.id)
            .map((s) => s.traceId),
        );
        return collector.spans.filter((s) => ids.has(s.traceId));
      },
      (spans) => pipeline.every((service) => spans.some((s) => s.service === service)),
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
    const client = kbClient(`127.0.0.1:${PORTS['query-service'].grpcPort}`);
    await grpcSearch(client, TENANT, { query: 'spacecraft transfer orbits traced', topK: 2 });
    client.close();
    const searchSpans = await waitFor(
      async () => {
        const root = collector.spans.find(
          (s) => s.name === 'kb.search' && s.attributes['kb.tenant_id'] === TENANT,
        );
        return root ? collector.spans.filter((s) => s.traceId === root.traceId) : [];
      },
      (spans) =>
        spans.some((s) => s.name === 'kb.embed_query') &&
        spans.filter((s) => s.name.startsWith('pg')).length >= 2,
      30_000,
    );
    const names = searchSpans.map((s) => s.name);
    // gRPC server span, cache lookups, the query embedding, then pgvector (BEGIN … SELECT) and BM25 (WITH …).
    expect(names).toEqual(
      expect.arrayContaining([
        'grpc.kb.v1.KnowledgeBase/Search',
        'kb.search',
        'redis-GET',
        'redis-SET',
        'kb.embed_query',
      ]),
    );
    expect(
      names.filter(
        (n) => n.startsWith('pg.query:SELECT postgres') || n.startsWith('pg.query:WITH'),
      ),
    ).toHaveLength(2);
    expect(searchSpans.every((s) => s.service === 'query-service')).toBe(true);
  });

  it('serves a repeated search from the cache until the index changes', async () => {
    const search = async () => {
      const response = await fetch(`${queryUrl}/v1/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-tenant-id': TENANT },
        body: JSON.stringify({ query: 'Bright comets and their tails', topK: 3 }),
      });
      return (await response.json()) as { cache: string; hits: Array<{ text: string }> };
    };
    const first = await search();
    const second = await search();
    expect([first.cache, second.cache]).toEqual(['miss', 'hit']);
    expect(second.hits).toEqual(first.hits);

    const upload2 = await upload(
      'comets.txt',
      'Bright comets grow long tails of dust and gas near the Sun.',
      'text/plain',
    );
    const { id } = (await upload2.json()) as { id: string };
    await waitFor(
      () => getDocument(id),
      (d) => d.status === 'indexed',
      60_000,
    );
    const afterIndexing = await search();
    expect(afterIndexing.cache).toBe('miss');
    expect(afterIndexing.hits[0]!.text).toContain('Bright comets');

    // Prometheus scrape endpoints carry the suite's metrics.
    const queryMetrics = await (await fetch(`${queryUrl}/metrics`)).text();
    expect(queryMetrics).toMatch(/kb_search_requests_total\{[^}]*cache="hit"[^}]*\} [1-9]/);
    expect(queryMetrics).toMatch(/kb_search_duration_ms_bucket/);
    const indexingMetrics = await (
      await fetch(`http://127.0.0.1:${PORTS['indexing-service'].port}/metrics`)
    ).text();
    expect(indexingMetrics).toMatch(/kb_chunks_indexed_total(\{[^}]*\})? [1-9]/);
  });

  it('answers a second upload of the same content with the first document', async () => {
    const first = await upload(
      'notes.txt',
      'Twice uploaded notes about lighthouse keepers.',
      'text/plain',
    );
    const { id } = (await first.json()) as { id: string };
    const again = await upload(
      'copy-of-notes.txt',
      'Twice uploaded notes about lighthouse keepers.',
      'text/plain',
    );
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id, duplicate: true });
  });

  it('refuses a file over the size limit with 413 and stores nothing', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 'a');
    const response = await upload('big.txt', big, 'text/plain');
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'payload_too_large' } });
    const sha256 = createHash('sha256').update(big).digest('hex');
    expect(await blobs.exists(`blobs/sha256/${sha256}`)).toBe(false);
  });

  it('deletes a document: its row, original, vectors, lexical rows and cached results go', async () => {
    const content = 'Ferns reproduce with spores carried by the wind, not with seeds.';
    const created = (await (await upload('ferns.txt', content, 'text/plain')).json()) as {
      id: string;
    };
    await waitFor(
      () => getDocument(created.id),
      (d) => d.status === 'indexed',
      60_000,
    );
    const search = async () => {
      const response = await fetch(`${queryUrl}/v1/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-tenant-id': TENANT },
        body: JSON.stringify({ query: 'how do ferns reproduce', topK: 5, mode: 'lexical' }),
      });
      return (await response.json()) as { cache: string; hits: Array<{ documentId: string }> };
    };
    await search();
    expect((await search()).hits.map((h) => h.documentId)).toContain(created.id);

    const deleted = await fetch(`${documentUrl}/v1/documents/${created.id}`, {
      method: 'DELETE',
      headers: { 'x-tenant-id': TENANT },
    });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({
      documentId: created.id,
      blobDeleted: true,
      indexRemoval: 'scheduled',
    });
    const sha256 = createHash('sha256').update(content).digest('hex');
    expect(await blobs.exists(`blobs/sha256/${sha256}`)).toBe(false);
    expect(
      (
        await fetch(`${documentUrl}/v1/documents/${created.id}`, {
          headers: { 'x-tenant-id': TENANT },
        })
      ).status,
    ).toBe(404);

    await waitFor(
      () => vectors.countDocument(TENANT, created.id),
      (n) => n === 0,
      30_000,
    );
    const after = await waitFor(
      search,
      (r) => !r.hits.some((h) => h.documentId === created.id),
      30_000,
    );
    expect(after.cache).toBe('miss');
    const again = await fetch(`${documentUrl}/v1/documents/${created.id}`, {
      method: 'DELETE',
      headers: { 'x-tenant-id': TENANT },
    });
    expect(again.status).toBe(404);
  });

  it('keeps document-service unready while its migrations are pending', async () => {
    const schema = `ready_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    const readyEnv = {
      ...env,
      DB_SCHEMA: schema,
      MIGRATE_ON_START: 'false',
      KAFKA_GROUP_ID: `ready-${schema}`,
    };
    const service = startService('document-service', {
      env: readyEnv,
      ports: { 'document-service': { port: 4111 } },
    });
    try {
      const probe = async () => {
        const response = await fetch('http://127.0.0.1:4111/health/ready').catch(() => undefined);
        return response
          ? {
              status: response.status,
              body: (await response.json()) as {
                error?: { details?: { checks?: Record<string, boolean> } };
              },
            }
          : undefined;
      };
      const unready = await waitFor(
        probe,
        (r) => r?.status === 503 && r.body.error?.details?.checks?.['kafka-consumer'] === true,
        60_000,
      );
      expect(unready!.body.error!.details!.checks).toMatchObject({
        postgres: true,
        migrations: false,
      });
      execFileSync(process.execPath, ['apps/document-service/dist/migrate.js'], {
        env: readyEnv,
        stdio: 'ignore',
      });
      expect((await waitFor(probe, (r) => r?.status === 200, 30_000))!.status).toBe(200);
    } finally {
      await stopServices([service]);
      const pg = new Client({ connectionString: env['DATABASE_URL'] });
      await pg.connect();
      await pg.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pg.end();
    }
  });

  it('answers with BM25 results marked degraded when the vector store is unreachable', async () => {
    const { REDIS_URL: _noCache, ...withoutCache } = env;
    const degradedEnv = {
      ...withoutCache,
      VECTOR_DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:1/postgres',
    };
    const service = startService('query-service', {
      env: degradedEnv,
      ports: { 'query-service': { port: 4112, grpcPort: 50152 } },
    });
    try {
      await waitReady([service], 120_000);
      const response = await fetch('http://127.0.0.1:4112/v1/search', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-tenant-id': TENANT },
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

  it('retrieves context for a question within the token budget, with citations', async () => {
    const client = kbClient(`127.0.0.1:${PORTS['query-service'].grpcPort}`);
    const context = await grpcRetrieveContext(client, TENANT, {
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
    expect(DOCUMENT.slice(venus!.startOffset, venus!.endOffset)).toBe(venus!.text); // blank lines restored

    const rest = await fetch(`${queryUrl}/v1/context`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-tenant-id': TENANT },
      body: JSON.stringify({ question: 'deep-space antenna size', tokenBudget: 10 }),
    });
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({
      error: { code: 'invalid_argument', message: expect.stringMatching(/tokenBudget/) },
    });

    const tool = (await (await fetch(`${queryUrl}/v1/tools/search_knowledge_base`)).json()) as {
      type: string;
      function: {
        name: string;
        parameters: { required: string[]; properties: Record<string, unknown> };
      };
    };
    expect(tool).toMatchObject({ type: 'function', function: { name: 'search_knowledge_base' } });
    expect(tool.function.parameters.required).toEqual(['query']);
    expect(Object.keys(tool.function.parameters.properties).sort()).toEqual([
      'mode',
      'query',
      'topK',
    ]);
  });

  it('does not show one tenant’s chunks to another', async () => {
    const client = kbClient(`127.0.0.1:${PORTS['query-service'].grpcPort}`);
    const other = await grpcSearch(client, `${TENANT}-other`, {
      query: 'Venus atmosphere',
      topK: 5,
    });
    client.close();
    expect(other.hits).toEqual([]);
  });

  it('marks an unsupported file failed with a reason code instead of dropping it', async () => {
    const response = await upload(
      'image.png',
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1]),
      'image/png',
    );
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const failed = await waitFor(
      () => getDocument(id),
      (d) => ['indexed', 'failed'].includes(d.status),
      60_000,
    );
    expect(failed).toMatchObject({ status: 'failed', failure: { reason: 'unsupported_type' } });
  });

  it('answers bad requests with a status, a stable code and a message', async () => {
    const noTenant = await upload('a.txt', 'hello', 'text/plain', '');
    expect(noTenant.status).toBe(401);
    expect(await noTenant.json()).toMatchObject({ error: { code: 'unauthenticated' } });

    const empty = await upload('empty.txt', '', 'text/plain');
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ error: { code: 'empty_file' } });

    const missing = await fetch(`${documentUrl}/v1/documents/${randomUUID()}`, {
      headers: { 'x-tenant-id': TENANT },
    });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'document_not_found' } });

    const badSearch = await fetch(`${queryUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-tenant-id': TENANT },
      body: JSON.stringify({ query: '', topK: 1000 }),
    });
    expect(badSearch.status).toBe(400);
    const body = (await badSearch.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('invalid_argument');
    expect(body.error.message).toMatch(/query/);
    expect(body.error.message).toMatch(/topK/);

    const client = kbClient(`127.0.0.1:${PORTS['query-service'].grpcPort}`);
    await expect(grpcSearch(client, '', { query: 'x' })).rejects.toMatchObject({ code: 16 });
    await expect(grpcSearch(client, TENANT, { query: '   ' })).rejects.toMatchObject({ code: 3 });
    client.close();
  });
});
