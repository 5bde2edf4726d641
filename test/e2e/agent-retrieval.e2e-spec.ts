/**
 * What agents need from search (issue 12, parts 3, 4 and 7), through the public APIs: hits that
 * carry their document's fields and their location, totals, GET search, similarity search,
 * conversation-aware context and the `auto` query type.
 */
import { PDFDocument, StandardFonts } from 'pdf-lib';

import { grpcRetrieveContext, kbClient } from '../support/grpc-client';
import { useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(240_000);

const QUERY_EMBEDDINGS = [
  '# Query service',
  '',
  'The query service answers searches over the documents a caller may read. It runs vector and',
  'keyword retrieval side by side, fuses both lists into one ranking, and can rerank, diversify',
  'and add neighbouring chunks before it returns a page of results with their citations.',
  '',
  '## Embedding questions',
  '',
  'The query service embeds every question with the embedding model before the vector search.',
  'Each question embedding is cached in Redis, keyed by the model and the normalized question text.',
  '',
].join('\n');

const THUMBNAILS =
  'How is it cached? Thumbnails are cached. Every thumbnail image is cached by the CDN edge ' +
  'cache for a day, and cached again in the browser cache; the cache is purged when the image ' +
  'changes.';

interface Hit {
  documentId: string;
  text: string;
  page?: number;
  headingPath?: string[];
  tags?: string[];
  metadata?: Record<string, unknown>;
  contentType?: string;
  filename?: string;
  createdAt?: string;
  updatedAt?: string;
}

describe('agent retrieval', () => {
  const suite = useSuite('agent-retrieval', 5200);
  const ids: Record<'embeddings' | 'thumbnails' | 'handbook', string> = {
    embeddings: '',
    thumbnails: '',
    handbook: '',
  };

  const post = async (path: string, body: object) =>
    fetch(`${suite.queryUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    const line = (page: ReturnType<typeof pdf.addPage>, text: string, y: number) =>
      page.drawText(text, { x: 40, y, size: 10, font });
    const cover = pdf.addPage();
    for (let i = 0; i < 4; i++) {
      line(
        cover,
        `Cover page of the mariner handbook, part ${i}, about ropes and sails.`,
        700 - i * 20,
      );
    }
    const second = pdf.addPage();
    for (let i = 0; i < 4; i++) {
      line(second, `Semaphore flags spell letters between ships, lesson ${i}.`, 700 - i * 20);
    }
    const uploads = [
      ['embeddings', 'query-embeddings.md', QUERY_EMBEDDINGS, 'text/markdown'],
      ['thumbnails', 'thumbnails.txt', THUMBNAILS, 'text/plain'],
      ['handbook', 'handbook.pdf', Buffer.from(await pdf.save()), 'application/pdf'],
    ] as const;
    for (const [key, filename, body, type] of uploads) {
      const response = await suite.upload(filename, body, type, undefined, {
        tags: [key],
        metadata: { team: 'search', year: 2026 },
      });
      ids[key] = ((await response.json()) as { id: string }).id;
    }
    for (const id of Object.values(ids)) {
      await waitFor(
        () => suite.getDocument(id),
        (d) => d.status === 'indexed',
        120_000,
      );
    }
  });

  it("returns hits with their document's fields, page, heading path and a total", async () => {
    const response = await post('/v1/search', { query: 'question embedding Redis', topK: 3 });
    const body = (await response.json()) as {
      hits: Hit[];
      total: number;
      totalRelation: string;
      details: string;
    };
    expect(body.details).toBe('applied');
    expect(body.total).toBeGreaterThanOrEqual(body.hits.length);
    expect(['eq', 'gte']).toContain(body.totalRelation);
    // The chunk that starts in the second section, under both headings.
    const hit = body.hits.find(
      (h) => h.documentId === ids.embeddings && h.text.includes('cached in Redis'),
    )!;
    expect(hit).toMatchObject({
      headingPath: ['Query service', 'Embedding questions'],
      tags: ['embeddings'],
      metadata: { team: 'search', year: 2026 },
      contentType: 'text/markdown',
      filename: 'query-embeddings.md',
    });
    expect(Date.parse(hit.createdAt!)).not.toBeNaN();
    expect(Date.parse(hit.updatedAt!)).not.toBeNaN();

    const flags = (await (
      await post('/v1/search', { query: 'semaphore flags', mode: 'lexical', topK: 5 })
    ).json()) as { hits: Hit[] };
    const pages = flags.hits.filter((h) => h.documentId === ids.handbook).map((h) => h.page);
    expect(pages).toContain(2);
  });

  it('serves GET /v1/search from the query string', async () => {
    const query = new URLSearchParams({ q: 'thumbnail CDN', limit: '1', mode: 'lexical' });
    const response = await fetch(`${suite.queryUrl}/v1/search?${query.toString()}`, {
      headers: await suite.auth(),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { hits: Hit[]; mode: string; nextOffset?: number };
    expect(body.mode).toBe('lexical');
    expect(body.hits).toHaveLength(1);
    expect(body.hits[0]!.documentId).toBe(ids.thumbnails);
    const bad = await fetch(`${suite.queryUrl}/v1/search?limit=2`, { headers: await suite.auth() });
    expect(bad.status).toBe(400);
  });

  it('finds documents similar to a document, leaving it out, and to a text', async () => {
    const byDocument = await post('/v1/search/similar', {
      documentId: ids.embeddings,
      unit: 'documents',
      topK: 5,
    });
    expect(byDocument.status).toBe(200);
    const similar = (await byDocument.json()) as { hits: Hit[]; unit: string };
    expect(similar.unit).toBe('documents');
    const documents = similar.hits.map((h) => h.documentId);
    expect(documents).not.toContain(ids.embeddings);
    expect(new Set(documents).size).toBe(documents.length);
    expect(documents.length).toBeGreaterThan(0);

    const byText = (await (
      await post('/v1/search/similar', { text: 'signal flags at sea', topK: 1 })
    ).json()) as { hits: Hit[] };
    expect(byText.hits[0]!.documentId).toBe(ids.handbook);

    const missing = await post('/v1/search/similar', {
      documentId: '00000000-0000-4000-8000-000000000000',
    });
    expect(missing.status).toBe(404);
  });

  it('answers a follow-up with the right passages only when the conversation is used', async () => {
    const conversation = [
      { role: 'user', content: 'How does the query service embed a question?' },
      { role: 'assistant', content: 'With the embedding model, before the vector search.' },
      { role: 'user', content: 'Which model does it use?' },
      { role: 'assistant', content: 'The one configured for the chunks.' },
      { role: 'user', content: 'and how is it cached?' },
    ];
    const withHistory = (await (
      await post('/v1/context', { messages: conversation, tokenBudget: 200 })
    ).json()) as {
      queryStrategy: string;
      standaloneQuery: string;
      passages: Array<{ documentId: string }>;
    };
    expect(withHistory.queryStrategy).toBe('history_rule');
    expect(withHistory.standaloneQuery).toBe('how is it cached? (query service embed question)');
    expect(withHistory.passages[0]!.documentId).toBe(ids.embeddings);

    const alone = (await (
      await post('/v1/context', { question: 'and how is it cached?', tokenBudget: 200 })
    ).json()) as { queryStrategy: string; passages: Array<{ documentId: string }> };
    expect(alone.queryStrategy).toBe('standalone');
    expect(alone.passages[0]!.documentId).not.toBe(ids.embeddings);

    // The same over gRPC.
    const client = kbClient(`127.0.0.1:${suite.ports['query-service']!.grpcPort}`);
    const grpc = await grpcRetrieveContext(client, suite.token, {
      messages: conversation,
      tokenBudget: 200,
    });
    client.close();
    expect(grpc).toMatchObject({ queryStrategy: 'history_rule' });
    expect(grpc.passages[0]!.documentId).toBe(ids.embeddings);
  });

  it('holds both sides of a hybrid search to an exclusion', async () => {
    const ask = async (query: string) =>
      ((await (await post('/v1/search', { query, topK: 10 })).json()) as { hits: Hit[] }).hits;
    expect((await ask('how is it cached')).map((h) => h.documentId)).toContain(ids.thumbnails);
    // The thumbnails text is the closest in meaning, but says "thumbnail": neither side keeps it.
    const excluded = await ask('how is it cached -thumbnail');
    expect(excluded.map((h) => h.documentId)).toContain(ids.embeddings);
    expect(excluded.map((h) => h.documentId)).not.toContain(ids.thumbnails);
  });

  it('detects the query type under mode auto and names it', async () => {
    const ask = async (query: string) =>
      (await (await post('/v1/search', { query, mode: 'auto', topK: 3 })).json()) as {
        mode: string;
        queryType: string;
        hits: Hit[];
      };
    const phrase = await ask('"edge cache"');
    expect(phrase).toMatchObject({ mode: 'auto', queryType: 'phrase' });
    expect(phrase.hits[0]!.documentId).toBe(ids.thumbnails);
    const question = await ask('How are questions turned into vectors?');
    expect(question).toMatchObject({ mode: 'auto', queryType: 'question' });
    expect(question.hits[0]!.documentId).toBe(ids.embeddings);
  });
});
