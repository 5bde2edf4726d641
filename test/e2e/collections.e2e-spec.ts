/**
 * Knowledge bases as collections and filtered listing (issue 13 parts 1-2, docs/adr/0024),
 * through the public REST and gRPC APIs and the built `kb` CLI: stats, metadata values and
 * listings never count or show what the caller cannot read; a bad filter is 400; a cascade
 * delete deletes what only the knowledge base holds and unlinks the rest; emptying reports its
 * count and the documents leave search. Usage by day and quotas (docs/adr/0053), through REST
 * and `kb usage` / `kb quotas`.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';

import { type ServiceError, status } from '@grpc/grpc-js';
import type { TokenClaims } from '@kb/auth';
import { tenantSpace, toTenantId } from '@kb/contracts';
import { PgLexicalIndex } from '@kb/lexical-index';

import { grpcListDocuments, kbClient } from '../support/grpc-client';
import { useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(300_000);

describe('collections', () => {
  const suite = useSuite('collections', 6300);
  const run = `w${randomUUID().slice(0, 8)}`;

  const rest = async (
    path: string,
    init: RequestInit = {},
    caller?: Partial<TokenClaims>,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, checked by matchers
  ): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${suite.documentUrl}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', ...(await suite.auth(caller)) },
    });
    return { status: response.status, body: await response.json() };
  };
  // Asynchronously: a synchronous spawn blocks this process's event loop for the CLI's whole run,
  // and a keep-alive socket the server closed meanwhile fails the next fetch.
  const kb = async (args: string[], caller?: string) => {
    const result = await promisify(execFile)(
      process.execPath,
      ['apps/kb-cli/dist/main.js', ...args, '--json'],
      {
        env: {
          ...process.env,
          KB_TOKEN: caller ?? suite.token,
          KB_DOCUMENTS_URL: suite.documentUrl,
        },
      },
    ).catch((error: { stderr?: string }) => {
      throw new Error(`kb ${args.join(' ')}: ${error.stderr ?? String(error)}`);
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, checked by matchers
    return JSON.parse(result.stdout) as any;
  };
  const uploadIndexed = async (
    name: string,
    text: string,
    fields: Parameters<typeof suite.upload>[4],
  ): Promise<string> => {
    const response = await suite.upload(name, text, 'text/plain', suite.tenant, fields);
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    await waitFor(
      () => rest(`/v1/documents/${id}`, {}, fields?.caller),
      (d) => d.body.status === 'indexed',
      120_000,
    );
    return id;
  };
  const hidden = { user: 'stranger' };

  it('reports stats, metadata values and filtered listings over what the caller reads', async () => {
    const created = await kb([
      'kb',
      'create',
      'reports',
      '--name',
      'Quarterly reports',
      '--metadata',
      '{"owner":"finance","retention":"7y"}',
    ]);
    expect(created).toMatchObject({ id: 'reports', metadata: { owner: 'finance' } });
    const mine = [
      await uploadIndexed('q1.txt', `First quarter ${run} revenue grew.`, {
        knowledgeBaseIds: ['reports'],
        tags: ['finance'],
        metadata: { team: 'red', year: 2024 },
      }),
      await uploadIndexed('q2.txt', `Second quarter ${run} costs fell.`, {
        knowledgeBaseIds: ['reports'],
        tags: ['finance', 'draft'],
        metadata: { team: ['red', 'blue'], year: 2025 },
      }),
    ];
    // Uploaded by someone else, readable by nobody but them (and admins).
    const secret = await uploadIndexed('q3.txt', `Third quarter ${run} layoffs planned.`, {
      knowledgeBaseIds: ['reports'],
      metadata: { team: 'secret-team', year: 2025 },
      caller: hidden,
    });

    const stats = await rest('/v1/knowledge-bases/reports/stats');
    expect(stats.body).toMatchObject({
      knowledgeBaseId: 'reports',
      status: 'active',
      documentCount: 2,
      documentsByStatus: { indexed: 2, failed: 0 },
      scope: 'readable',
    });
    expect(stats.body.chunkCount).toBeGreaterThanOrEqual(2);
    expect(stats.body.lastIndexedAt).toEqual(expect.any(String));
    const ofAdmin = await rest('/v1/knowledge-bases/reports/stats', {}, { roles: ['admin'] });
    expect(ofAdmin.body).toMatchObject({ documentCount: 3, scope: 'all' });
    expect(await kb(['kb', 'stats', 'reports'])).toMatchObject({ documentCount: 2 });

    const values = await rest('/v1/knowledge-bases/reports/metadata-values?field=team');
    expect(values.body.values).toEqual([
      { value: 'blue', count: 1 },
      { value: 'red', count: 2 },
    ]);
    const adminValues = await rest(
      '/v1/knowledge-bases/reports/metadata-values?field=metadata.team',
      {},
      { roles: ['admin'] },
    );
    expect(adminValues.body.values.map((v: { value: string }) => v.value)).toContain('secret-team');
    expect(
      (await rest('/v1/knowledge-bases/reports/metadata-values?field=bad key')).body,
    ).toMatchObject({ error: { code: 'invalid_field' } });

    const where = (filter: object) => encodeURIComponent(JSON.stringify(filter));
    const listed = await rest(
      `/v1/documents?where=${where({ 'metadata.year': { $gte: 2025 }, status: 'indexed' })}`,
    );
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((d: { id: string }) => d.id)).toEqual([mine[1]]);
    // The reader is never shown the hidden document, whatever the filter says.
    const probing = await rest(`/v1/documents?where=${where({ 'metadata.team': 'secret-team' })}`);
    expect(probing.body.items).toEqual([]);
    const asAdmin = await rest(
      `/v1/knowledge-bases/reports/documents?where=${where({ 'metadata.team': 'secret-team' })}`,
      {},
      { roles: ['admin'] },
    );
    expect(asAdmin.body.items.map((d: { id: string }) => d.id)).toEqual([secret]);
    const scoped = await rest(
      `/v1/knowledge-bases/reports/documents?limit=1000&where=${where({ tags: { $in: ['draft'] } })}`,
    );
    expect(scoped.body.items.map((d: { id: string }) => d.id)).toEqual([mine[1]]);

    for (const [bad, message] of [
      ['{"tags":{"$regex":"x"}}', 'unknown operator'],
      ['{"owner":"x"}', 'unknown field'],
      ['not json', 'not valid JSON'],
    ] as const) {
      const refused = await rest(`/v1/documents?where=${encodeURIComponent(bad)}`);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({
        code: 'invalid_filter',
        message: expect.stringContaining(message),
      });
    }
    expect((await rest('/v1/documents?limit=1001')).status).toBe(400);

    // gRPC ListDocuments takes the same filter.
    const client = kbClient(`127.0.0.1:${suite.ports['query-service']!.grpcPort}`);
    const page = await grpcListDocuments(client, suite.token, {
      filterJson: JSON.stringify({ 'metadata.team': 'red' }),
      knowledgeBaseId: 'reports',
    });
    expect(page.documents.map((d) => d.id).sort()).toEqual([...mine].sort());
    const refused = await grpcListDocuments(client, suite.token, {
      filterJson: '{"status":{"$gt":1}}',
    }).catch((error: ServiceError) => error);
    expect(refused).toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: expect.stringContaining('$gt applies to times and numeric metadata only'),
    });
    // The stable code travels in the `x-error-code` trailer, as for every gRPC error.
    expect((refused as ServiceError).metadata.get('x-error-code')).toEqual(['invalid_filter']);
    client.close();

    // The CLI lists the same documents.
    const cli = await kb(['docs', 'list', '--kb', 'reports', '--where', '{"tags":"finance"}']);
    expect(cli.items.map((d: { id: string }) => d.id).sort()).toEqual([...mine].sort());

    // Metadata: merged by default, replaced with merge=false.
    const merged = await rest('/v1/knowledge-bases/reports', {
      method: 'PATCH',
      body: JSON.stringify({ metadata: { retention: null, region: 'eu' } }),
    });
    expect(merged.body.metadata).toEqual({ owner: 'finance', region: 'eu' });
    const replaced = await rest('/v1/knowledge-bases/reports?merge=false', {
      method: 'PATCH',
      body: JSON.stringify({ metadata: { owner: 'legal' } }),
    });
    expect(replaced.body.metadata).toEqual({ owner: 'legal' });

    // Paging, name search and total.
    await kb(['kb', 'create', 'reports-archive', '--name', 'Archived reports']);
    const first = await rest('/v1/knowledge-bases?name=REPORTS&limit=1');
    expect(first.body).toMatchObject({ total: 2, items: [{ id: 'reports' }] });
    const second = await rest(
      `/v1/knowledge-bases?name=reports&limit=1&cursor=${first.body.nextCursor}`,
    );
    expect(second.body).toMatchObject({
      total: 2,
      items: [{ id: 'reports-archive' }],
      nextCursor: null,
    });
    const byOffset = await rest('/v1/knowledge-bases?name=reports&offset=1');
    expect(byOffset.body.items.map((k: { id: string }) => k.id)).toEqual(['reports-archive']);
    const listedByCli = await kb(['kb', 'list', '--name', 'reports']);
    expect(listedByCli.items[0].stats).toMatchObject({ documentCount: 2 });

    // Without cascade, a knowledge base holding documents the caller reads is refused; the
    // count names only what they read. A reader cannot delete at all, and learns nothing.
    const refusedDelete = await rest('/v1/knowledge-bases/reports', { method: 'DELETE' });
    expect(refusedDelete.status).toBe(409);
    expect(refusedDelete.body.error.message).toContain('2 document(s)');
    const asReader = await rest(
      '/v1/knowledge-bases/reports',
      { method: 'DELETE' },
      { user: 'reader', roles: ['viewer'] },
    );
    expect(asReader.status).toBe(403);
    expect(asReader.body.error.code).toBe('permission_denied');
    const readerStats = await rest(
      '/v1/knowledge-bases/reports/stats',
      {},
      { user: 'reader', roles: ['viewer'] },
    );
    expect(readerStats.body).toMatchObject({ documentCount: 0, status: 'active' });
  });

  it('empties a knowledge base and deletes one with cascade, through the CLI', async () => {
    await kb(['kb', 'create', 'scratch']);
    await kb(['kb', 'create', 'keeper']);
    const word = `${run}zq`;
    const only = await uploadIndexed('only.txt', `Scratch note ${word} about rigging.`, {
      knowledgeBaseIds: ['scratch'],
    });
    const shared = await uploadIndexed('shared.txt', `Shared note ${word} about sails.`, {
      knowledgeBaseIds: ['scratch', 'keeper'],
    });
    const found = await suite.search({ query: word, topK: 10, mode: 'lexical' });
    expect(found.hits.map((h) => h.documentId).sort()).toEqual([only, shared].sort());

    const emptied = await kb(['kb', 'empty', 'scratch']);
    expect(emptied).toMatchObject({
      knowledgeBaseId: 'scratch',
      deletedCount: 2,
      unlinkedCount: 1,
      retainedCount: 0,
      status: 'completed',
    });
    expect((await rest(`/v1/documents/${only}`)).status).toBe(404);
    expect((await rest(`/v1/documents/${shared}`)).body.knowledgeBaseIds).toEqual(['keeper']);
    expect((await rest('/v1/knowledge-bases/scratch')).status).toBe(200);
    expect((await rest('/v1/knowledge-bases/scratch/stats')).body.documentCount).toBe(0);
    // The deleted document leaves search; the unlinked one stays, but not in `scratch`.
    await waitFor(
      () => suite.search({ query: word, topK: 10, mode: 'lexical' }),
      (r) => r.hits.every((h) => h.documentId !== only),
      60_000,
    );
    await waitFor(
      () => suite.search({ query: word, topK: 10, mode: 'lexical', knowledgeBaseIds: ['scratch'] }),
      (r) => r.hits.length === 0,
      60_000,
    );

    // Cascade: the document only it holds goes; the shared one is unlinked.
    await kb(['kb', 'create', 'doomed']);
    const doomedOnly = await uploadIndexed('doomed.txt', `Doomed ${word} ballast.`, {
      knowledgeBaseIds: ['doomed'],
    });
    await rest(`/v1/documents/${shared}`, {
      method: 'PATCH',
      body: JSON.stringify({ knowledge_base_ids: ['keeper', 'doomed'] }),
    });
    const deleted = await kb(['kb', 'delete', 'doomed', '--cascade']);
    expect(deleted).toMatchObject({
      id: 'doomed',
      cascade: true,
      deletedCount: 1,
      unlinkedCount: 1,
    });
    expect((await rest(`/v1/documents/${doomedOnly}`)).status).toBe(404);
    expect((await rest(`/v1/documents/${shared}`)).body.knowledgeBaseIds).toEqual(['keeper']);
    expect((await rest('/v1/knowledge-bases/doomed')).status).toBe(404);
    await waitFor(
      () => suite.search({ query: word, topK: 10, mode: 'lexical' }),
      (r) => r.hits.map((h) => h.documentId).join() === shared,
      60_000,
    );
  });

  // The last defect of issue 13 (ADR 24): emptying answers at once, and search must not wait for
  // indexing-service to drop the chunks, nor serve a result cached before the empty.
  it('leaves search at once when emptied, cached results included, then leaves both indexes', async () => {
    await kb(['kb', 'create', 'instant']);
    const word = `${run}qx`;
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      ids.push(
        await uploadIndexed(`instant-${n}.txt`, `Instant note ${n}: ${word} about anchors.`, {
          knowledgeBaseIds: ['instant'],
        }),
      );
    }
    const query = { query: word, topK: 10, mode: 'lexical' };
    const before = await suite.search(query);
    expect(before.hits.map((h) => h.documentId).sort()).toEqual([...ids].sort());
    expect((await suite.search(query)).cache).toBe('hit');

    const emptied = await rest('/v1/knowledge-bases/instant/documents', { method: 'DELETE' });
    expect(emptied.status).toBe(200);
    expect(emptied.body).toMatchObject({ deletedCount: 3, status: 'completed' });
    // Right after the answer: none of them, and not the cached answer from before.
    const after = await suite.search(query);
    expect(after.hits).toEqual([]);
    expect(after.cache).not.toBe('hit');
    const inKb = await suite.search({ ...query, knowledgeBaseIds: ['instant'] });
    expect(inKb.hits).toEqual([]);

    // Then indexing-service drops their chunks from both indexes (one documents_removed event).
    const space = tenantSpace(toTenantId(suite.tenant));
    const lexical = new PgLexicalIndex({ url: suite.env['DATABASE_URL']! });
    try {
      await waitFor(
        async () => {
          let rows = 0;
          for (const id of ids) {
            rows +=
              (await suite.vectors.countDocument(space, id)) +
              (await lexical.countDocument(space, id));
          }
          return rows;
        },
        (rows) => rows === 0,
        60_000,
      );
    } finally {
      await lexical.close();
    }
    expect((await suite.search(query)).hits).toEqual([]);
  });

  // Usage and quotas (issue 39 item 5, docs/adr/0053), in a tenant of their own: query-service
  // keeps a tenant's limits for 30 s, so they are set before the tenant's first search.
  describe('usage and quotas', () => {
    const other = `quota-${run}`;
    const admin = { tenant: other, user: 'root', roles: ['admin'] };
    const editor = { tenant: other, user: 'ed', roles: ['editor'] };
    const kbq = `kbq-${run}`;
    const searchAs = async (body: object) => {
      const response = await fetch(`${suite.queryUrl}/v1/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(await suite.auth(editor)) },
        body: JSON.stringify(body),
      });
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, checked by matchers
        body: (await response.json()) as any,
      };
    };

    it('refuses an upload past the document quota, before storing anything, with the limit and the use', async () => {
      expect(
        (
          await rest(
            '/v1/knowledge-bases',
            { method: 'POST', body: JSON.stringify({ id: kbq, name: 'quota' }) },
            admin,
          )
        ).status,
      ).toBe(201);
      // Only a tenant admin sets limits; the CLI sets them as one.
      expect(
        (
          await rest(
            '/v1/quotas',
            { method: 'PUT', body: JSON.stringify({ maxDocuments: 1 }) },
            editor,
          )
        ).body.error.code,
      ).toBe('permission_denied');
      const adminToken = (await suite.auth(admin)).authorization.replace('Bearer ', '');
      const set = await kb(
        ['quotas', '--max-documents', '1', '--max-searches-per-day', '3'],
        adminToken,
      );
      expect(set.tenant).toMatchObject({ maxDocuments: 1, maxSearchesPerDay: 3 });
      await kb(['quotas', '--kb', kbq, '--max-searches-per-day', '1'], adminToken);
      // Any member reads the limits in force.
      const read = await rest('/v1/quotas', {}, editor);
      expect(read.body.knowledgeBases).toEqual([
        expect.objectContaining({ id: kbq, maxSearchesPerDay: 1 }),
      ]);

      const first = await suite.upload('q1.txt', `quota one ${run}`, 'text/plain', other, {
        knowledgeBaseIds: [kbq],
      });
      expect(first.status).toBe(202);
      const second = await suite.upload('q2.txt', `quota two ${run}`, 'text/plain', other);
      expect(second.status).toBe(403);
      expect(((await second.json()) as { error: unknown }).error).toMatchObject({
        code: 'quota_exceeded',
        details: { quota: 'documents', limit: 1, used: 1 },
      });
      const listed = await rest('/v1/documents', {}, admin);
      expect(listed.body.items).toHaveLength(1);
    });

    it('counts searches per day, for the tenant and a knowledge base, and answers 429 past a limit', async () => {
      expect((await searchAs({ query: 'quota', knowledgeBaseIds: [kbq] })).status).toBe(200);
      const kbRefused = await searchAs({ query: 'quota', knowledgeBaseIds: [kbq] });
      expect(kbRefused.status).toBe(429);
      expect(kbRefused.body.error).toMatchObject({
        code: 'quota_exceeded',
        details: { quota: 'searchesPerDay', limit: 1, knowledgeBaseId: kbq },
      });
      expect(Number(kbRefused.retryAfter)).toBeGreaterThan(0);
      expect((await searchAs({ query: 'quota' })).status).toBe(200);
      const tenantRefused = await searchAs({ query: 'quota' });
      expect(tenantRefused.status).toBe(429);
      expect(tenantRefused.body.error.details).toMatchObject({ quota: 'searchesPerDay', limit: 3 });
    });

    it('serves usage by day to tenant admins only: stored now, and the day\u2019s searches and uploads', async () => {
      expect((await rest('/v1/usage', {}, editor)).status).toBe(403);
      const today = new Date().toISOString().slice(0, 10);
      const usage = await waitFor(
        async () => (await rest('/v1/usage', {}, admin)).body,
        (u) => u.totals?.searches === 2 && u.totals?.uploads === 1,
        60_000,
        500,
      );
      expect(usage.stored).toMatchObject({ documents: 1, knowledgeBases: 1 });
      expect(usage.knowledgeBases).toEqual([expect.objectContaining({ id: kbq, documents: 1 })]);
      expect(usage.days).toEqual([
        expect.objectContaining({ day: today, searches: 2, uploads: 1 }),
      ]);
      const inKb = await kb(
        ['usage', '--kb', kbq],
        (await suite.auth(admin)).authorization.replace('Bearer ', ''),
      );
      expect(inKb.totals).toMatchObject({ searches: 1, uploads: 1 });
    });
  });
});
