/**
 * More ways in (issue 13 part 3, ADR 25), through the public REST API: a JSON upload, an
 * externalId that makes version 2, pre-computed chunks with embeddings into a knowledge base a
 * tenant admin allowed them in (and the 400s that name a bad chunk or vector, ADR 33), the inactive state leaving and re-entering search, and strict multipart fields with
 * the deprecated snake_case name still answered.
 */
import { useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(240_000);

type Doc = { id: string; version: number; status: string; state: string; externalId: string };

describe('ways in', () => {
  const suite = useSuite('ingest', 6400);
  const json = async (path: string, body: unknown, method = 'POST', roles?: string[]) =>
    fetch(`${suite.documentUrl}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(await suite.auth(roles ? { user: 'root', roles } : undefined)),
      },
      body: JSON.stringify(body),
    });
  const indexed = (id: string, version = 1) =>
    waitFor(
      () => suite.getDocument(id),
      (d) => d.status === 'indexed' && d['version'] === version,
      90_000,
    );
  const lexicalHits = async (query: string) =>
    (await suite.search({ query, topK: 10, mode: 'lexical' })).hits.map((h) => h.documentId);

  it('indexes a JSON upload and makes the same externalId its version 2', async () => {
    const first = await json('/v1/documents', {
      markdown: '# Keepers\n\nLighthouse keepers trimmed the wicks of quillbright lamps nightly.',
      title: 'Keepers',
      tags: ['history'],
      externalId: 'notes/keepers.md',
    });
    expect(first.status).toBe(202);
    const created = (await first.json()) as Doc;
    expect(created).toMatchObject({ version: 1, externalId: 'notes/keepers.md', state: 'active' });
    await indexed(created.id);
    expect(await lexicalHits('quillbright lamps')).toContain(created.id);

    const second = await json('/v1/documents', {
      markdown: '# Keepers\n\nKeepers later polished the marrowglass lenses every morning.',
      externalId: 'notes/keepers.md',
    });
    expect(second.status).toBe(202);
    expect(await second.json()).toMatchObject({ id: created.id, version: 2 });
    await indexed(created.id, 2);
    await waitFor(
      () => lexicalHits('marrowglass lenses'),
      (ids) => ids.includes(created.id),
      30_000,
    );
    // Version 1's chunks left with the swap: one document, one version answers.
    expect(await lexicalHits('quillbright lamps')).not.toContain(created.id);
    const again = await json('/v1/documents', {
      markdown: '# Keepers\n\nKeepers later polished the marrowglass lenses every morning.',
      externalId: 'notes/keepers.md',
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id: created.id, version: 2, unchanged: true });
  });

  it('indexes pre-computed chunks (vector and lexical) where a tenant admin allowed them, and names a bad chunk in the 400', async () => {
    const embeddingUrl = `http://127.0.0.1:${suite.ports['embedding-service']!.port}`;
    const texts = [
      'Zephyrine owls nest in abandoned bell towers.',
      'They hunt moths by the light of the harbour.',
    ];
    const embedded = await fetch(`${embeddingUrl}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ model: 'all-MiniLM-L6-v2', input: texts }),
    });
    expect(embedded.status).toBe(200);
    const { data } = (await embedded.json()) as { data: Array<{ embedding: number[] }> };
    const chunks = texts.map((text, i) => ({ id: `c${i}`, text, embedding: data[i]!.embedding }));

    // Off unless a tenant admin turns it on (ADR 33): `default` never takes them.
    const refused = await json('/v1/knowledge-bases/default/chunks', { title: 'Owls', chunks });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      error: { code: 'precomputed_vectors_disabled' },
    });
    const byEditor = await json('/v1/knowledge-bases', {
      id: 'owls',
      name: 'Owls',
      allowPrecomputedVectors: true,
    });
    expect(byEditor.status).toBe(403);
    expect((await json('/v1/knowledge-bases', { id: 'owls', name: 'Owls' })).status).toBe(201);
    const allowed = await json(
      '/v1/knowledge-bases/owls',
      { allowPrecomputedVectors: true },
      'PATCH',
      ['admin'],
    );
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toMatchObject({ allowPrecomputedVectors: true });

    const missing = await json('/v1/knowledge-bases/owls/chunks', {
      title: 'Owls',
      chunks: [chunks[0], { id: 'c1', text: texts[1] }],
    });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({
      error: { code: 'invalid_chunk', message: 'chunks[1] (id "c1") has no embedding' },
    });
    const short = await json('/v1/knowledge-bases/owls/chunks', {
      title: 'Owls',
      chunks: [{ ...chunks[0], embedding: [0.1, 0.2] }],
    });
    expect(short.status).toBe(400);
    expect(await short.json()).toMatchObject({
      error: {
        code: 'invalid_chunk',
        message:
          'chunks[0] (id "c0"): its embedding has 2 dimensions; knowledge base "owls" has 384',
      },
    });
    const scaled = await json('/v1/knowledge-bases/owls/chunks', {
      title: 'Owls',
      chunks: [{ ...chunks[0], embedding: chunks[0]!.embedding.map((v) => v * 40) }],
    });
    expect(scaled.status).toBe(400);
    expect(await scaled.json()).toMatchObject({
      error: {
        code: 'invalid_vector',
        message: expect.stringContaining('chunks[0] (id "c0"): its embedding\'s L2 norm is 40.00'),
      },
    });

    const ok = await json('/v1/knowledge-bases/owls/chunks', { title: 'Owls', chunks });
    expect(ok.status).toBe(202);
    const document = (await ok.json()) as Doc;
    await indexed(document.id);
    expect(await suite.getDocument(document.id)).toMatchObject({ chunkCount: 2 });
    const semantic = await suite.search({ query: 'where do owls nest', topK: 5, mode: 'semantic' });
    expect(semantic.hits[0]).toMatchObject({ documentId: document.id, text: texts[0] });
    expect(await lexicalHits('zephyrine owls')).toContain(document.id);
    // ACL: another user of the tenant, not granted, does not find it.
    const stranger = await fetch(`${suite.queryUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth({ user: 'stranger' })) },
      body: JSON.stringify({ query: 'zephyrine owls', topK: 10, mode: 'lexical' }),
    });
    const strangerHits = ((await stranger.json()) as { hits: Array<{ documentId: string }> }).hits;
    expect(strangerHits.map((h) => h.documentId)).not.toContain(document.id);
  });

  it('takes an inactive document out of search at once and brings it back, its index kept', async () => {
    const created = (await (
      await json('/v1/documents', { text: 'Gravelwort grows only on northern scree slopes.' })
    ).json()) as Doc;
    await indexed(created.id);
    // Twice: the second answer is the cached one, which must not outlive the change.
    await lexicalHits('gravelwort scree');
    expect(await lexicalHits('gravelwort scree')).toContain(created.id);

    const off = await json(`/v1/documents/${created.id}`, { state: 'inactive' }, 'PATCH');
    expect(off.status).toBe(200);
    expect(await off.json()).toMatchObject({ state: 'inactive', version: 1 });
    await waitFor(
      () => lexicalHits('gravelwort scree'),
      (ids) => !ids.includes(created.id),
      15_000,
    );
    const semantic = await suite.search({ query: 'gravelwort scree slopes', mode: 'semantic' });
    expect(semantic.hits.map((h) => h.documentId)).not.toContain(created.id);
    // Kept indexed: still `indexed`, chunks and all, without a new version.
    expect(await suite.getDocument(created.id)).toMatchObject({ status: 'indexed', version: 1 });

    const on = await json(`/v1/documents/${created.id}`, { state: 'active' }, 'PATCH');
    expect(on.status).toBe(200);
    await waitFor(
      () => lexicalHits('gravelwort scree'),
      (ids) => ids.includes(created.id),
      15_000,
    );
    expect(await suite.getDocument(created.id)).toMatchObject({ version: 1, state: 'active' });
  });

  it('refuses an unknown multipart field with 400 and still takes the deprecated name', async () => {
    const post = async (fields: Record<string, string>, text: string) => {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.append(name, value);
      form.append('file', new Blob([text], { type: 'text/plain' }), 'field.txt');
      return fetch(`${suite.documentUrl}/v1/documents`, {
        method: 'POST',
        body: form,
        headers: await suite.auth(),
      });
    };
    await json('/v1/knowledge-bases', { id: 'kb-fields', name: 'Fields' });
    const misspelled = await post({ knowledgeBaseID: '["kb-fields"]' }, 'misspelled field');
    expect(misspelled.status).toBe(400);
    const error = ((await misspelled.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toContain('knowledgeBaseID');

    const old = await post({ knowledge_base_ids: '["kb-fields"]' }, 'the deprecated name');
    expect(old.status).toBe(202);
    expect(old.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(old.headers.get('sunset')).toBeTruthy();
    expect(await old.json()).toMatchObject({ knowledgeBaseIds: ['kb-fields'] });
    const current = await post({ knowledgeBaseIds: '["kb-fields"]' }, 'the current name');
    expect(current.status).toBe(202);
    expect(current.headers.get('deprecation')).toBeNull();
    expect(await current.json()).toMatchObject({ knowledgeBaseIds: ['kb-fields'] });
  });
});
