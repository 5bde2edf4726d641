/**
 * Document lifecycle through the public API: duplicates, size limits, deletes that reach every
 * store and cache, and readiness while migrations are pending.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { pipelineOf } from '@kb/contracts';
import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { Client } from 'pg';

import { deleteDeadLetterTopics } from '../support/kafka';
import { serviceEnv, startService, stopServices } from '../support/services';
import { useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(240_000);

describe('document lifecycle', () => {
  const suite = useSuite('docs', 4300);

  it('answers a second upload of the same content with the first document', async () => {
    const first = await suite.upload(
      'notes.txt',
      'Twice uploaded notes about lighthouse keepers.',
      'text/plain',
    );
    const { id } = (await first.json()) as { id: string };
    const again = await suite.upload(
      'copy-of-notes.txt',
      'Twice uploaded notes about lighthouse keepers.',
      'text/plain',
    );
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id, duplicate: true });
  });

  it('refuses a file over the size limit with 413 and stores nothing', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 'a');
    const response = await suite.upload('big.txt', big, 'text/plain');
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'payload_too_large' } });
    const sha256 = createHash('sha256').update(big).digest('hex');
    expect(await suite.blobs.exists(`blobs/${suite.tenant}/sha256/${sha256}`)).toBe(false);
    expect(readdirSync(suite.uploadDir)).toEqual([]); // the spooled part is gone too
  });

  it('deletes a document: its row, original, vectors, lexical rows and cached results go', async () => {
    const content = 'Ferns reproduce with spores carried by the wind, not with seeds.';
    const created = (await (await suite.upload('ferns.txt', content, 'text/plain')).json()) as {
      id: string;
    };
    await waitFor(
      () => suite.getDocument(created.id),
      (d) => d.status === 'indexed',
      60_000,
    );
    const search = async () => {
      const response = await fetch(`${suite.queryUrl}/v1/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(await suite.auth()) },
        body: JSON.stringify({ query: 'how do ferns reproduce', topK: 5, mode: 'lexical' }),
      });
      return (await response.json()) as { cache: string; hits: Array<{ documentId: string }> };
    };
    await search();
    expect((await search()).hits.map((h) => h.documentId)).toContain(created.id);

    const deleted = await fetch(`${suite.documentUrl}/v1/documents/${created.id}`, {
      method: 'DELETE',
      headers: await suite.auth(),
    });
    expect(deleted.status).toBe(200);
    // An editor is not told whether the original went (docs/adr/0019); it did, nothing shared it.
    expect(await deleted.json()).toEqual({ documentId: created.id, indexRemoval: 'scheduled' });
    const sha256 = createHash('sha256').update(content).digest('hex');
    expect(await suite.blobs.exists(`blobs/${suite.tenant}/sha256/${sha256}`)).toBe(false);
    expect(
      (
        await fetch(`${suite.documentUrl}/v1/documents/${created.id}`, {
          headers: await suite.auth(),
        })
      ).status,
    ).toBe(404);

    await waitFor(
      () => suite.vectors.countDocument(suite.tenant, created.id),
      (n) => n === 0,
      30_000,
    );
    const after = await waitFor(
      search,
      (r) => !r.hits.some((h) => h.documentId === created.id),
      30_000,
    );
    expect(after.cache).toBe('miss');
    const again = await fetch(`${suite.documentUrl}/v1/documents/${created.id}`, {
      method: 'DELETE',
      headers: await suite.auth(),
    });
    expect(again.status).toBe(404);
  });

  it('shows an edit of a document on the next searches, and drops it once deleted, though its hit details are kept (ADR 45)', async () => {
    const upload = await suite.upload(
      'kelp.txt',
      'Kelp forests grow along cold rocky coasts and shelter sea otters.',
      'text/plain',
      suite.tenant,
      { tags: ['ocean'] },
    );
    const { id } = (await upload.json()) as { id: string };
    await waitFor(
      () => suite.getDocument(id),
      (d) => d.status === 'indexed',
      60_000,
    );
    // Another topK each time, so the result cache never answers: every search reads its hit
    // details, from query-service's details cache or from document-service.
    let searches = 0;
    const kelp = async () => {
      const { hits } = (await suite.search({
        query: 'kelp forests sea otters',
        topK: (searches++ % 100) + 1,
        mode: 'lexical',
      })) as { hits: Array<{ documentId: string; tags?: string[]; updatedAt?: string }> };
      return hits.find((h) => h.documentId === id);
    };
    expect((await kelp())?.tags).toEqual(['ocean']);
    expect((await kelp())?.tags).toEqual(['ocean']); // the details as kept

    const edited = await fetch(`${suite.documentUrl}/v1/documents/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ tags: ['coast'] }),
    });
    expect(edited.status).toBe(200);
    const { updatedAt } = (await edited.json()) as { updatedAt: string };
    // Within the event's delivery: well before the 30 s an entry is kept at most.
    const after = await waitFor(kelp, (hit) => hit?.tags?.[0] === 'coast', 20_000, 500);
    expect(after).toMatchObject({ tags: ['coast'], updatedAt });

    const deleted = await fetch(`${suite.documentUrl}/v1/documents/${id}`, {
      method: 'DELETE',
      headers: await suite.auth(),
    });
    expect(deleted.status).toBe(200);
    await waitFor(kelp, (hit) => hit === undefined, 20_000, 500);
  });

  it('keeps document-service unready while its migrations are pending', async () => {
    const schema = `ready_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    const readyEnv = {
      ...suite.env,
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
      // As document-service's own role, like the service (the launcher's serviceEnv).
      execFileSync(process.execPath, ['apps/document-service/dist/migrate.js'], {
        env: serviceEnv('document-service', readyEnv),
        stdio: 'ignore',
      });
      expect((await waitFor(probe, (r) => r?.status === 200, 30_000))!.status).toBe(200);
    } finally {
      await stopServices([service]);
      const pg = new Client({ connectionString: suite.env['DATABASE_URL'] });
      await pg.connect();
      await pg.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pg.end();
      await deleteDeadLetterTopics(`ready-${schema}`);
    }
  });

  it('bulk-ingests a folder with kb ingest: indexed, duplicate and failed with reasons, exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-ingest-'));
    mkdirSync(join(dir, 'nested', 'deeper'), { recursive: true });
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, 'guide.md'), '# Guide\n\nHow lighthouses guide ships at night.');
    writeFileSync(join(dir, 'nested', 'notes.txt'), 'Tide tables predict high water twice a day.');
    writeFileSync(
      join(dir, 'nested', 'deeper', 'copy.md'),
      '# Guide\n\nHow lighthouses guide ships at night.',
    );
    writeFileSync(join(dir, 'nested', 'empty.txt'), '');
    // A GIF: images are read through OCR (ADR 50), but only PNG, JPEG, TIFF and WebP.
    writeFileSync(join(dir, 'animation.gif'), Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'));
    writeFileSync(join(dir, '.git', 'config'), 'hidden files are skipped');
    const kb = await fetch(`${suite.documentUrl}/v1/knowledge-bases`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ id: 'kb-ingest', name: 'Ingested' }),
    });
    expect(kb.status).toBe(201);
    const result = spawnSync(
      process.execPath,
      [
        'apps/kb-cli/dist/main.js',
        'ingest',
        dir,
        '--kb',
        'kb-ingest',
        '--json',
        '--timeout',
        '120',
      ],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          KB_TOKEN: suite.token,
          KB_DOCUMENTS_URL: suite.documentUrl,
        },
      },
    );
    const summary = JSON.parse(result.stdout) as {
      files: number;
      indexed: number;
      duplicate: number;
      failed: number;
      outcomes: Array<{ path: string; outcome: string; reason?: string }>;
    };
    expect(result.status).toBe(1);
    expect(summary).toMatchObject({ files: 5, indexed: 2, duplicate: 1, failed: 2 });
    const byPath = Object.fromEntries(summary.outcomes.map((o) => [o.path, o]));
    expect(byPath['nested/empty.txt']).toMatchObject({ outcome: 'failed', reason: 'empty_file' });
    expect(byPath['animation.gif']).toMatchObject({
      outcome: 'failed',
      reason: 'unsupported_type',
    });
    expect([byPath['guide.md']!.outcome, byPath['nested/deeper/copy.md']!.outcome].sort()).toEqual([
      'duplicate',
      'indexed',
    ]);
    const listed = (await (
      await fetch(`${suite.documentUrl}/v1/documents?limit=100`, { headers: await suite.auth() })
    ).json()) as { items: Array<{ title: string; filename: string; knowledgeBaseIds: string[] }> };
    expect(listed.items.find((d) => d.title === 'nested/notes.txt')).toMatchObject({
      filename: 'notes.txt',
      knowledgeBaseIds: ['kb-ingest'],
    });
  });

  it('swaps in new content as a new version: searches during the swap see one version, then the new one', async () => {
    const paragraphs = (words: string[]) =>
      Array.from(
        { length: 8 },
        (_, i) =>
          `Orchid care note ${i}: ${words.join(' ')} keep the greenhouse humid and the light indirect, ` +
          `water the bark mix sparingly and let the roots breathe between waterings number ${i}.`,
      ).join('\n\n');
    const first = paragraphs(['phalaenopsis', 'moth', 'orchids']);
    const created = (await (await suite.upload('orchids.md', first, 'text/markdown')).json()) as {
      id: string;
    };
    const v1 = await waitFor(
      () => suite.getDocument(created.id),
      (d) => d.status === 'indexed',
      60_000,
    );
    expect(v1).toMatchObject({ version: 1 });

    const versionsFound = async () => {
      const { hits } = await suite.search({ query: 'orchid greenhouse humid bark', topK: 20 });
      const mine = hits.filter((h) => h.documentId === created.id) as unknown as Array<{
        documentVersion: number;
      }>;
      return [...new Set(mine.map((h) => h.documentVersion))];
    };
    // The first answer is taken before the swap starts, so it can only be v1; the loop then runs
    // alongside the swap, however fast the swap turns out to be.
    const seen: number[][] = [await versionsFound()];
    let swapping = true;
    const searches = (async () => {
      for (let i = 0; swapping || i < 3; i++) {
        seen.push(await versionsFound());
        if (!swapping) await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();

    const form = new FormData();
    const second = paragraphs(['cattleya', 'corsage', 'orchids', 'repotted']);
    form.append('file', new Blob([second], { type: 'text/markdown' }), 'orchids-v2.md');
    const replaced = await fetch(`${suite.documentUrl}/v1/documents/${created.id}/content`, {
      method: 'PUT',
      body: form,
      headers: await suite.auth(),
    });
    expect(replaced.status).toBe(202);
    expect(await replaced.json()).toMatchObject({ id: created.id, version: 2, status: 'pending' });
    const v2 = await waitFor(
      () => suite.getDocument(created.id),
      (d) => d.status === 'indexed' && d['version'] === 2,
      60_000,
    );
    swapping = false;
    await searches;

    // Never half a document, never two versions in one answer; first only v1, last only v2.
    expect(seen.every((versions) => versions.length === 1)).toBe(true);
    expect(seen[0]).toEqual([1]);
    expect(seen[seen.length - 1]).toEqual([2]);
    expect(seen.findIndex((v) => v[0] === 2)).toBeGreaterThan(-1);
    expect(seen.slice(seen.findIndex((v) => v[0] === 2)).every((v) => v[0] === 2)).toBe(true);
    // The old version's vectors are gone; the new version's are all there.
    expect(await suite.vectors.countDocument(suite.tenant, created.id)).toBe(v2['chunkCount']);
    expect(v2['stageTimes']).toHaveProperty('indexed');
    expect(await suite.blobs.exists(`blobs/${suite.tenant}/sha256/${String(v1['sha256'])}`)).toBe(
      false,
    );

    // The same content again changes nothing.
    const again = new FormData();
    again.append('file', new Blob([second], { type: 'text/markdown' }), 'orchids-v2.md');
    const unchanged = await fetch(`${suite.documentUrl}/v1/documents/${created.id}/content`, {
      method: 'PUT',
      body: again,
      headers: await suite.auth(),
    });
    expect(unchanged.status).toBe(200);
    expect(await unchanged.json()).toMatchObject({ version: 2, unchanged: true });
    expect(readdirSync(suite.uploadDir)).toEqual([]);
  });

  it('indexes PDF, DOCX and HTML uploads and finds their text', async () => {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    pdf
      .addPage()
      .drawText('Cover page of the mariner handbook.', { x: 50, y: 700, size: 12, font });
    pdf
      .addPage()
      .drawText('Semaphore flags spell letters between ships.', { x: 50, y: 700, size: 12, font });
    const word = await Packer.toBuffer(
      new Document({
        sections: [
          {
            children: [
              new Paragraph({ text: 'Knots', heading: HeadingLevel.HEADING_1 }),
              new Paragraph('A bowline makes a fixed loop that will not slip.'),
            ],
          },
        ],
      }),
    );
    const uploads = [
      ['handbook.pdf', Buffer.from(await pdf.save()), 'application/pdf', 'Semaphore flags'],
      ['knots.docx', word, 'application/octet-stream', 'bowline fixed loop'],
      [
        'tides.html',
        '<h1>Tides</h1><p>Spring tides follow the full moon.</p>',
        'text/html',
        'spring tides full moon',
      ],
    ] as const;
    for (const [name, body, type, phrase] of uploads) {
      const response = await suite.upload(name, body, type);
      expect(response.status).toBe(202);
      const { id } = (await response.json()) as { id: string };
      const document = await waitFor(
        () => suite.getDocument(id),
        (d) => ['indexed', 'failed'].includes(d.status),
        60_000,
      );
      expect({ name, status: document.status }).toEqual({ name, status: 'indexed' });
      const found = await suite.search({ query: phrase, topK: 3, mode: 'lexical' });
      expect({ name, found: found.hits.some((h) => h.documentId === id) }).toEqual({
        name,
        found: true,
      });
    }
  });

  it('manages knowledge bases: create, read, rename, immutable pipeline (409), documents, delete', async () => {
    const kb = (path = '', init: RequestInit = {}) =>
      suite.auth().then((auth) =>
        fetch(`${suite.documentUrl}/v1/knowledge-bases${path}`, {
          ...init,
          headers: { 'content-type': 'application/json', ...auth },
        }),
      );
    const created = await kb('', {
      method: 'POST',
      body: JSON.stringify({
        id: 'handbooks',
        name: 'Handbooks',
        chunker: { size: 500, overlap: 50 },
      }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({
      id: 'handbooks',
      chunker: { strategy: 'recursive', size: 500, overlap: 50 },
      embeddingModel: 'all-MiniLM-L6-v2',
      // Detected by asking embedding-service, which loaded the model.
      embeddingDimension: 384,
    });
    expect(
      (await kb('', { method: 'POST', body: JSON.stringify({ id: 'handbooks', name: 'x' }) }))
        .status,
    ).toBe(409);
    const otherModel = await kb('', {
      method: 'POST',
      body: JSON.stringify({ id: 'manuals', name: 'Manuals', embeddingModel: 'bge-small-en' }),
    });
    expect(otherModel.status).toBe(400);
    expect(await otherModel.json()).toMatchObject({
      error: {
        code: 'embedding_model_not_served',
        message: expect.stringContaining('"all-MiniLM-L6-v2"'),
      },
    });

    const renamed = await kb('/handbooks', {
      method: 'PATCH',
      body: JSON.stringify({ name: 'Ship handbooks' }),
    });
    expect(await renamed.json()).toMatchObject({ name: 'Ship handbooks' });
    const immutable = await kb('/handbooks', {
      method: 'PATCH',
      body: JSON.stringify({ chunker: { strategy: 'recursive', size: 800, overlap: 50 } }),
    });
    expect(immutable.status).toBe(409);
    expect(await immutable.json()).toMatchObject({
      error: {
        code: 'immutable_field',
        message: expect.stringContaining('create a new knowledge base'),
      },
    });
    // Sending the same values back is not a change.
    const same = await kb('/handbooks', {
      method: 'PATCH',
      body: JSON.stringify({
        chunker: { strategy: 'recursive', size: 500, overlap: 50 },
        description: 'd',
      }),
    });
    expect(same.status).toBe(200);

    const upload = await suite.upload(
      'rigging.txt',
      'Standing rigging holds the mast.',
      'text/plain',
      suite.tenant,
      {
        knowledgeBaseIds: ['handbooks'],
      },
    );
    const { id } = (await upload.json()) as { id: string };
    const unknown = await suite.upload('x.txt', 'Unknown base.', 'text/plain', suite.tenant, {
      knowledgeBaseIds: ['nowhere'],
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: { code: 'unknown_knowledge_base' } });
    const page = (await (await kb('/handbooks/documents?limit=5')).json()) as {
      items: Array<{ id: string }>;
    };
    expect(page.items.map((d) => d.id)).toEqual([id]);
    expect((await kb('/handbooks', { method: 'DELETE' })).status).toBe(409);
    expect((await kb('/missing')).status).toBe(404);
    expect(
      ((await (await kb('')).json()) as { items: Array<{ id: string }> }).items.map((k) => k.id),
    ).toContain('handbooks');
    await fetch(`${suite.documentUrl}/v1/documents/${id}`, {
      method: 'DELETE',
      headers: await suite.auth(),
    });
    expect((await kb('/handbooks', { method: 'DELETE' })).status).toBe(200);
    expect((await kb('/handbooks')).status).toBe(404);
  });

  it('adds and removes documents by tag rule, in the indexes too, without re-embedding', async () => {
    const kb = (path = '', init: RequestInit = {}) =>
      suite.auth().then((auth) =>
        fetch(`${suite.documentUrl}/v1/knowledge-bases${path}`, {
          ...init,
          headers: { 'content-type': 'application/json', ...auth },
        }),
      );
    const upload = await suite.upload(
      'payroll.txt',
      'Payroll runs on the last working day of the month.',
      'text/plain',
      suite.tenant,
      { tags: ['hr'] },
    );
    const { id } = (await upload.json()) as { id: string };
    const indexed = await waitFor(
      () => suite.getDocument(id),
      (d) => d.status === 'indexed',
      60_000,
    );
    expect(indexed['knowledgeBaseIds']).toEqual(['default']);
    const inPeople = async () =>
      (
        await suite.search({ query: 'payroll last working day', knowledgeBaseIds: ['people'] })
      ).hits.some((h) => h.documentId === id);

    // A new knowledge base whose rule matches takes the document in.
    const created = await kb('', {
      method: 'POST',
      body: JSON.stringify({ id: 'people', name: 'People', tagRule: { anyOf: ['hr'] } }),
    });
    expect(await created.json()).toMatchObject({ tagRule: { anyOf: ['hr'] } });
    expect(await suite.getDocument(id)).toMatchObject({
      knowledgeBaseIds: ['default', 'people'],
      explicitKnowledgeBaseIds: ['default'],
    });
    await waitFor(inPeople, (found) => found, 30_000);

    // Its tags change: it leaves.
    await fetch(`${suite.documentUrl}/v1/documents/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ tags: ['finance'] }),
    });
    expect(await suite.getDocument(id)).toMatchObject({ knowledgeBaseIds: ['default'] });
    await waitFor(inPeople, (found) => !found, 30_000);

    // The rule changes to match again: it is back.
    const ruled = await kb('/people', {
      method: 'PATCH',
      body: JSON.stringify({ tagRule: { anyOf: ['hr', 'finance'] } }),
    });
    expect(ruled.status).toBe(200);
    expect(await suite.getDocument(id)).toMatchObject({ knowledgeBaseIds: ['default', 'people'] });
    await waitFor(inPeople, (found) => found, 30_000);
    // Never re-embedded: still the first version, indexed once.
    expect(await suite.getDocument(id)).toMatchObject({ version: 1, status: 'indexed' });
    const listed = (await (await kb('/people/documents')).json()) as {
      items: Array<{ id: string }>;
    };
    expect(listed.items.map((d) => d.id)).toEqual([id]);
  });

  it('indexes a document once per pipeline of its knowledge bases: two models, one cache', async () => {
    const kb = async (body: object) =>
      fetch(`${suite.documentUrl}/v1/knowledge-bases`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(await suite.auth()) },
        body: JSON.stringify(body),
      });
    const chunker = { strategy: 'paragraph', size: 400 } as const;
    // Two pipelines: the same chunker, embedded by the model and by a second model (the FAKE
    // test embedder the suite serves beside it); a third knowledge base shares the first's.
    for (const body of [
      { id: 'atlas', name: 'Atlas', chunker },
      { id: 'atlas-hashed', name: 'Atlas, hashed', chunker, embeddingModel: 'test-hashing-384' },
      { id: 'atlas-copy', name: 'Atlas copy', chunker },
    ]) {
      expect((await kb(body)).status).toBe(201);
    }
    const paragraphs = [
      'Glaciers carve deep U-shaped valleys as they grind slowly downhill under their own weight, plucking boulders from the bedrock and scraping the valley floor smooth over thousands of years of advance and retreat.',
      'Fjords are drowned glacial valleys: when the ice melted and the sea rose, salt water flooded the troughs the glaciers had cut, leaving long narrow inlets between steep cliffs along the coasts of Norway and Chile.',
      'Moraines are ridges of rock and gravel that a glacier pushes ahead of it or drops along its sides; a terminal moraine marks the farthest point the ice ever reached before it began to melt back.',
    ];
    const upload = await suite.upload(
      'glaciers.txt',
      paragraphs.join('\n\n'),
      'text/plain',
      suite.tenant,
      { knowledgeBaseIds: ['atlas', 'atlas-hashed'] },
    );
    const { id } = (await upload.json()) as { id: string };
    const indexed = await waitFor(
      () => suite.getDocument(id),
      (d) => d.status === 'indexed' || d.status === 'failed',
      60_000,
    );
    expect(indexed).toMatchObject({ status: 'indexed', chunkCount: 3 });
    // Each pipeline's chunks are in a space of their own, and each knowledge base finds them.
    const spaceOf = (model: string) =>
      pipelineOf(suite.tenant, chunker, model, {
        chunker: { strategy: 'recursive', size: 300, overlap: 60 },
        model: 'all-MiniLM-L6-v2',
      }).space;
    expect(await suite.vectors.countDocument(spaceOf('all-MiniLM-L6-v2'), id)).toBe(3);
    expect(await suite.vectors.countDocument(spaceOf('test-hashing-384'), id)).toBe(3);
    expect(await suite.vectors.countDocument(suite.tenant, id)).toBe(0);
    for (const knowledgeBaseIds of [['atlas'], ['atlas-hashed'], ['atlas', 'atlas-hashed']]) {
      const found = await suite.search({
        query: 'drowned glacial valleys fjords',
        knowledgeBaseIds,
      });
      expect(found.hits[0]).toMatchObject({ documentId: id, text: paragraphs[1] });
      // Two spaces, one passage: the same chunk found by both models comes back once.
      const passages = found.hits.map((h) => `${h.documentId}#${h.text}`);
      expect(new Set(passages).size).toBe(passages.length);
    }

    // Another document sharing two paragraphs (each a chunk of its own: two never fit in 400
    // characters), in the third knowledge base, which has the first's pipeline: those two come
    // from the embedding cache, shared across knowledge bases; only the new one is embedded.
    const metrics = async () => {
      const text = await (
        await fetch(`http://127.0.0.1:${suite.ports['embedding-service']!.port}/metrics`)
      ).text();
      const hits =
        /kb_embedding_cache_lookups_total\{[^}]*model="all-MiniLM-L6-v2"[^}]*outcome="hit"[^}]*\} (\d+)/.exec(
          text,
        );
      return Number(hits?.[1] ?? 0);
    };
    const before = await metrics();
    const second = await suite.upload(
      'glaciers-2.txt',
      [
        paragraphs[0],
        paragraphs[1],
        // New text in every run: the cache outlives test runs.
        `Eskers are long winding ridges of sand and gravel left behind by meltwater rivers that once flowed in tunnels inside or beneath a glacier; when the ice melted away, the riverbed deposits were left standing above the plain (run ${randomUUID()}).`,
      ].join('\n\n'),
      'text/plain',
      suite.tenant,
      { knowledgeBaseIds: ['atlas-copy'] },
    );
    const secondId = ((await second.json()) as { id: string }).id;
    await waitFor(
      () => suite.getDocument(secondId),
      (d) => d.status === 'indexed',
      60_000,
    );
    expect((await metrics()) - before).toBe(2);

    // Leaving the second model's knowledge base takes the document out of that space.
    const patched = await fetch(`${suite.documentUrl}/v1/documents/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ knowledge_base_ids: ['atlas'] }),
    });
    expect(await patched.json()).toMatchObject({ knowledgeBaseIds: ['atlas'] });
    await waitFor(
      () => suite.vectors.countDocument(spaceOf('test-hashing-384'), id),
      (n) => n === 0,
      30_000,
    );
    expect(await suite.vectors.countDocument(spaceOf('all-MiniLM-L6-v2'), id)).toBe(3);

    // Joining it again needs that pipeline again: the same version goes through it (from the
    // caches), and the document is back in that space.
    await fetch(`${suite.documentUrl}/v1/documents/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ knowledge_base_ids: ['atlas', 'atlas-hashed'] }),
    });
    await waitFor(
      () => suite.vectors.countDocument(spaceOf('test-hashing-384'), id),
      (n) => n === 3,
      30_000,
    );
    expect(await suite.getDocument(id)).toMatchObject({ version: 1, status: 'indexed' });
    const back = await suite.search({ query: 'moraines', knowledgeBaseIds: ['atlas-hashed'] });
    expect(back.hits.map((h) => h.documentId)).toContain(id);
  });
});
