/**
 * Time-bound grants (issue 39 item 4, ADR 54) through the public REST API: a viewer finds a
 * document through an ACL entry that ends a few seconds later, and right after the end neither
 * search nor GET shows it — before any cleanup job ran (their ticks are set to ten minutes here).
 * A role assignment that ends the same way takes its rights with it.
 */
import { randomUUID } from 'node:crypto';

import { useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(180_000);

/** How long a grant lasts: long enough to see it work, short enough to wait for its end. */
const GRANT_MS = 8_000;
const MODES = ['semantic', 'lexical'];
const sleepUntil = (at: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

describe('expiring grants', () => {
  const suite = useSuite('grants', 8800, {
    GRANT_EXPIRY_INTERVAL_MS: '600000',
    GRANT_EXPIRY_TICK_MS: '600000',
  });
  const aclUrl = () => `http://127.0.0.1:${suite.ports['acl-service']!.port}`;
  const as = (user: string, roles: string[] = []) => suite.auth({ user, roles });
  /** The documents `user` finds, by each index on its own (pgvector, then the lexical index). */
  const search = async (user: string, query: string) => {
    const found = await Promise.all(MODES.map((mode) => searchIn(mode, user, query)));
    return [...new Set(found.flat())];
  };
  const searchIn = async (mode: string, user: string, query: string) => {
    const response = await fetch(`${suite.queryUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await as(user)) },
      body: JSON.stringify({ query, topK: 5, mode }),
    });
    const body = (await response.json()) as { hits: Array<{ documentId: string }> };
    return body.hits.map((hit) => hit.documentId);
  };
  const get = async (user: string, id: string) =>
    (await fetch(`${suite.documentUrl}/v1/documents/${id}`, { headers: await as(user) })).status;

  it('a viewer finds a document through an ending grant, and not a moment after its end', async () => {
    const word = `zqgrant${randomUUID().slice(0, 6)}`;
    const uploaded = await suite.upload(
      'granted.md',
      `# Quarterly plan\n\nThe ${word} plan is shared with a reviewer for a few seconds only.`,
      'text/markdown',
      suite.tenant,
      { acl: { users: [], groups: [], roles: [], tenant: false } },
    );
    expect(uploaded.status).toBe(202);
    const { id } = (await uploaded.json()) as { id: string };
    await waitFor(
      () => suite.getDocument(id),
      (d) => d.status === 'indexed',
      60_000,
    );
    expect(await search('vic', word)).toEqual([]);

    const end = Date.now() + GRANT_MS;
    const until = new Date(end).toISOString();
    const set = await fetch(`${suite.documentUrl}/v1/documents/${id}/acl`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ users: ['vic'], until: { 'u:vic': until } }),
    });
    expect(set.status).toBe(200);
    // Found by each index: both hold the grant principal.
    await waitFor(
      () => Promise.all(MODES.map((mode) => searchIn(mode, 'vic', word))),
      (found) => found.every((ids) => ids.includes(id)),
      GRANT_MS - 1_000,
    );
    expect(await get('vic', id)).toBe(200);

    await sleepUntil(end + 100);
    expect(await search('vic', word)).toEqual([]);
    expect(await get('vic', id)).toBe(404);
    // Not yet cleaned up: the entry is still in the ACL, and it is the end that stopped it.
    const owner = (await suite.getDocument(id)) as { acl?: { until?: Record<string, string> } };
    expect(owner.acl?.until).toEqual({ 'u:vic': until });
    // The owner still finds it.
    const mine = await fetch(`${suite.queryUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ query: word, topK: 5 }),
    });
    expect(
      ((await mine.json()) as { hits: Array<{ documentId: string }> }).hits.map(
        (h) => h.documentId,
      ),
    ).toContain(id);
  });

  it('a role assignment that ends takes its rights with it, and shows its end', async () => {
    const admin = await as('root', ['admin']);
    const end = Date.now() + GRANT_MS;
    const expiresAt = new Date(end).toISOString();
    const assign = (body: object) =>
      fetch(`${aclUrl()}/v1/acl/role-assignments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...admin },
        body: JSON.stringify(body),
      });
    const past = await assign({
      member: 'u:tess',
      role: 'editor',
      expiresAt: '2020-01-01T00:00:00Z',
    });
    expect(past.status).toBe(400);
    expect(((await past.json()) as { error: { code: string } }).error.code).toBe(
      'invalid_argument',
    );
    expect((await assign({ member: 'u:tess', role: 'editor', expiresAt })).status).toBe(200);

    const policy = await fetch(`${aclUrl()}/v1/acl/policy`, { headers: admin });
    expect(((await policy.json()) as { ends: unknown[] }).ends).toContainEqual({
      member: 'u:tess',
      target: 'r:editor',
      expiresAt,
    });
    const write = async () =>
      (
        await suite.upload('tess.md', `# Tess\n\n${randomUUID()}`, 'text/markdown', suite.tenant, {
          caller: { user: 'tess', roles: [] },
        })
      ).status;
    expect(await write()).toBe(202);

    await sleepUntil(end + 100);
    expect(await write()).toBe(403);
  });
});
