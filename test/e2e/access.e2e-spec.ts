/**
 * Access control end to end: a randomized world of users, groups, roles, documents and ACLs
 * checked against an independent oracle, revocations within the stated bound (cached results
 * included), the status codes of each refusal, and the audit log.
 *
 * The world (users, groups, documents, ACLs) comes from a fixed seed. The searches run twice: once
 * from the fixed seed, once from KB_ACL_SEED or, when unset, a fresh seed; every failure message
 * carries its seed, so any run can be replayed with KB_ACL_SEED=<seed>.
 */
import { status } from '@grpc/grpc-js';

import {
  grpcGetDocument,
  grpcListDocuments,
  grpcRetrieveContext,
  grpcSearch,
  kbClient,
} from '../support/grpc-client';
import { testToken, useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(300_000);

const SEED = 20261122;
const RUN_SEED = Number(process.env['KB_ACL_SEED'] ?? Math.floor(Math.random() * 2 ** 31));

/** mulberry32: a small, well-known seeded PRNG, so a world can be rebuilt from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface User {
  name: string;
  roles: string[];
  /** Groups given in the token. */
  tokenGroups: string[];
  /** Groups the tenant admin adds through acl-service. */
  adminGroups: string[];
}

interface Doc {
  id: string;
  tenant: string;
  owner: string;
  marker: string;
  tags: string[];
  /** In knowledge base `kb-scoped` (besides `default`) or not. */
  scoped: boolean;
  acl: { users: string[]; groups: string[]; roles: string[]; tenant: boolean };
}

const GROUPS = ['g-red', 'g-green', 'g-blue'];
const ROLES = ['editor', 'auditor', 'sales'];
const TAGS = ['t-alpha', 't-beta', 't-gamma'];
const SCOPED_KB = 'kb-scoped';

/** Rounds per oracle test: 40 in `npm test`; `npm run bench -- acl` runs 100,000. */
const ROUNDS = Number(process.env['KB_ACL_ROUNDS'] ?? 40);

/** A filter the oracle generates, with its meaning stated independently of the service's code. */
interface OracleFilter {
  filter: Record<string, unknown>;
  matches: (doc: Doc) => boolean;
}

describe('access control', () => {
  // KB_ACL_BASE_PORT lets `npm run bench -- acl` run beside another suite (default 4500).
  const suite = useSuite('access', Number(process.env['KB_ACL_BASE_PORT'] ?? 4500));
  const aclUrl = () => `http://127.0.0.1:${suite.ports['acl-service']!.port}`;
  const admin = () => suite.auth({ user: 'root', roles: ['admin'] });

  const random = prng(SEED);
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
  const some = <T>(items: T[], p: number): T[] => items.filter(() => random() < p);
  const other = `${suite.tenant}-other`;
  const users: User[] = Array.from({ length: 6 }, (_, i) => ({
    name: `user${i}`,
    // Everyone may upload (editor); some hold other roles too.
    roles: ['editor', ...some(ROLES.slice(1), 0.4)],
    tokenGroups: some(GROUPS, 0.3),
    adminGroups: some(GROUPS, 0.3),
  }));
  const docs: Doc[] = [];

  /** The oracle: who may read a document, from the world's definition alone. */
  const readable = (user: User, tenant: string, doc: Doc): boolean => {
    if (doc.tenant !== tenant) return false;
    const groups = new Set([...user.tokenGroups, ...user.adminGroups]);
    return (
      doc.owner === user.name ||
      doc.acl.tenant ||
      doc.acl.users.includes(user.name) ||
      doc.acl.groups.some((g) => groups.has(g)) ||
      doc.acl.roles.some((r) => user.roles.includes(r))
    );
  };
  const tokenOf = (user: User, tenant = suite.tenant) =>
    testToken({ tenant, user: user.name, roles: user.roles, groups: user.tokenGroups });

  beforeAll(async () => {
    process.stdout.write(`access control world seed ${SEED}, second run seed ${RUN_SEED}\n`);
    const created = await fetch(`${suite.documentUrl}/v1/knowledge-bases`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({ id: SCOPED_KB, name: 'Scoped' }),
    });
    expect(created.status).toBe(201);
    for (const user of users) {
      for (const group of user.adminGroups) {
        const response = await fetch(`${aclUrl()}/v1/acl/groups/${group}/members`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(await admin()) },
          body: JSON.stringify({ user: user.name }),
        });
        expect(response.status).toBe(200);
      }
    }
    for (const [tenant, count] of [
      [suite.tenant, 14],
      [other, 4],
    ] as const) {
      for (let i = 0; i < count; i++) {
        const owner = pick(users);
        const marker = `zq${tenant === other ? 'x' : ''}${i}marker${Math.floor(random() * 1e6)}`;
        const acl = {
          users: some(users, 0.2).map((u) => u.name),
          groups: some(GROUPS, 0.25),
          roles: some(ROLES.slice(1), 0.2),
          tenant: random() < 0.15,
        };
        const tags = some(TAGS, 0.4);
        const scoped = tenant === suite.tenant && random() < 0.4;
        // Two paragraphs, so most documents have two chunks and `neighbors` has work to do.
        const text = [
          `Quarterly planning notes ${marker}. Shared words about budgets and hiring plans.`,
          'The second paragraph repeats the budgets and hiring plans of the quarter in more ' +
            'words, so that the chunker of this suite cuts the document in two pieces of text, ' +
            'each long enough to stand on its own in a search result or a packed context.',
        ].join('\n\n');
        const response = await suite.upload(`${marker}.txt`, text, 'text/plain', tenant, {
          acl,
          tags,
          ...(scoped ? { knowledgeBaseIds: ['default', SCOPED_KB] } : {}),
          caller: { user: owner.name, roles: owner.roles, groups: owner.tokenGroups },
        });
        expect(response.status).toBe(202);
        const { id } = (await response.json()) as { id: string };
        docs.push({ id, tenant, owner: owner.name, marker, tags, scoped, acl });
      }
    }
    const rootToken = async (tenant: string) =>
      `Bearer ${await testToken({ tenant, user: 'root', roles: ['admin'] })}`;
    for (const doc of docs) {
      const authorization = await rootToken(doc.tenant);
      await waitFor(
        async () =>
          (await (
            await fetch(`${suite.documentUrl}/v1/documents/${doc.id}`, {
              headers: { authorization },
            })
          ).json()) as { status: string },
        (d) => ['indexed', 'failed'].includes(d.status),
        120_000,
      );
    }
  });

  /** A random filter over document ids and tags, top-level `$or`, `$nin` and `$ne` included. */
  function randomFilter(choose: <T>(items: T[]) => T, target: Doc): OracleFilter {
    const tag = choose(TAGS);
    const filters: OracleFilter[] = [
      {
        filter: { $or: [{ document_id: target.id }, { tags: { $in: [tag] } }] },
        matches: (d) => d.id === target.id || d.tags.includes(tag),
      },
      {
        filter: { document_id: { $nin: [target.id] } },
        matches: (d) => d.id !== target.id,
      },
      {
        filter: { document_id: { $ne: target.id } },
        matches: (d) => d.id !== target.id,
      },
      {
        filter: { $and: [{ tags: { $in: [tag] } }, { document_id: { $ne: target.id } }] },
        matches: (d) => d.tags.includes(tag) && d.id !== target.id,
      },
      {
        filter: { document_id: { $in: [target.id] } },
        matches: (d) => d.id === target.id,
      },
    ];
    return choose(filters);
  }

  /** Every document of the caller's tenant in one REST listing, page by page. */
  async function listAll(token: string, path: string): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const response = await fetch(`${suite.documentUrl}${path}?${query}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(response.status).toBe(200);
      const page = (await response.json()) as { items: Array<{ id: string }>; nextCursor: string };
      ids.push(...page.items.map((d) => d.id));
      cursor = page.nextCursor;
    } while (cursor);
    return ids;
  }

  const PROBES = [
    'grpc-marker',
    'grpc-broad',
    'grpc-context',
    'rest-search',
    'rest-context',
    'get-document',
    'list-documents',
  ] as const;
  type Probe = (typeof PROBES)[number];

  /**
   * Random searches, contexts, reads and listings as random users, over gRPC and REST, with random
   * filters, knowledge-base scopes, neighbours, MMR and rerank. Every answer is checked against the
   * oracle: nothing unreadable, nothing from another tenant, and what is readable is found.
   */
  async function checkRounds(seed: number, rounds: number): Promise<void> {
    const draw = prng(seed);
    const choose = <T>(items: readonly T[]): T => items[Math.floor(draw() * items.length)]!;
    const client = kbClient(`127.0.0.1:${suite.ports['query-service']!.grpcPort}`);
    const mine = docs.filter((d) => d.tenant === suite.tenant);
    const counts: Record<string, number> = {};
    let checks = 0;
    const tokens = new Map<string, string>();
    const tokenFor = async (user: User) => {
      if (!tokens.has(user.name)) tokens.set(user.name, await tokenOf(user));
      return tokens.get(user.name)!;
    };
    /** Each returned document must be readable; the whole set must equal `expected` if given. */
    const check = (where: string, user: User, returned: Iterable<string>, expected?: string[]) => {
      const ids = [...new Set(returned)].sort();
      for (const id of ids) {
        const doc = docs.find((d) => d.id === id);
        expect({
          where,
          id,
          readable: doc !== undefined && readable(user, suite.tenant, doc),
        }).toEqual({ where, id, readable: true });
      }
      if (expected) expect({ where, ids }).toEqual({ where, ids: [...expected].sort() });
      checks += 1;
    };
    try {
      for (let round = 0; round < rounds; round++) {
        const user = choose(users);
        const token = await tokenFor(user);
        const target = choose(docs);
        const probe: Probe = choose(PROBES);
        counts[probe] = (counts[probe] ?? 0) + 1;
        const where = `KB_ACL_SEED=${seed} round ${round}: ${user.name} (${probe})`;
        const visible = (matches: (d: Doc) => boolean = () => true) =>
          mine.filter((d) => readable(user, suite.tenant, d) && matches(d)).map((d) => d.id);
        switch (probe) {
          case 'grpc-marker': {
            // Lexical for an exact marker: found exactly when readable.
            const response = await grpcSearch(client, token, {
              query: target.marker,
              topK: 50,
              mode: 3,
            });
            const returned = response.hits.map((h) => h.documentId);
            check(where, user, returned);
            expect({ where, found: returned.includes(target.id) }).toEqual({
              where,
              found: readable(user, suite.tenant, target),
            });
            break;
          }
          case 'grpc-broad': {
            // Everything readable shares the broad words: all of it comes back (< 50 chunks).
            const filter = draw() < 0.5 ? randomFilter(choose, target) : undefined;
            const response = await grpcSearch(client, token, {
              query: 'quarterly planning budgets',
              topK: 50,
              mode: choose([1, 2, 3]),
              neighbors: choose([0, 0, 1, 2]),
              ...(filter ? { filter: filter.filter } : {}),
            });
            check(
              `${where} ${JSON.stringify(filter?.filter ?? {})}`,
              user,
              response.hits.map((h) => h.documentId),
              visible(filter?.matches),
            );
            break;
          }
          case 'grpc-context': {
            const context = await grpcRetrieveContext(client, token, {
              question: 'budgets and hiring plans',
              tokenBudget: 4000,
              candidates: 50,
            });
            check(
              where,
              user,
              context.passages.map((p) => p.documentId),
            );
            break;
          }
          case 'rest-search': {
            const filter = draw() < 0.6 ? randomFilter(choose, target) : undefined;
            const scoped = draw() < 0.3;
            const body = {
              query: 'quarterly planning budgets',
              topK: 50,
              mode: choose(['hybrid', 'semantic', 'lexical'] as const),
              neighbors: choose([0, 0, 1, 2]),
              mmr: draw() < 0.3,
              rerank: draw() < 0.2,
              ...(filter ? { filter: filter.filter } : {}),
              ...(scoped ? { knowledgeBaseIds: [SCOPED_KB] } : {}),
            };
            const response = await fetch(`${suite.queryUrl}/v1/search`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
              body: JSON.stringify(body),
            });
            expect({ where, status: response.status }).toEqual({ where, status: 200 });
            const result = (await response.json()) as { hits: Array<{ documentId: string }> };
            check(
              `${where} ${JSON.stringify(body)}`,
              user,
              result.hits.map((h) => h.documentId),
              visible((d) => (filter?.matches(d) ?? true) && (!scoped || d.scoped)),
            );
            break;
          }
          case 'rest-context': {
            const filter = draw() < 0.5 ? randomFilter(choose, target) : undefined;
            const response = await fetch(`${suite.queryUrl}/v1/context`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
              body: JSON.stringify({
                question: 'budgets and hiring plans',
                tokenBudget: 4000,
                ...(filter ? { filter: filter.filter } : {}),
              }),
            });
            expect({ where, status: response.status }).toEqual({ where, status: 200 });
            const context = (await response.json()) as { passages: Array<{ documentId: string }> };
            const returned = context.passages.map((p) => p.documentId);
            check(where, user, returned);
            for (const id of returned) {
              expect({
                where,
                id,
                matches: filter?.matches(docs.find((d) => d.id === id)!) ?? true,
              }).toEqual({ where, id, matches: true });
            }
            break;
          }
          case 'get-document': {
            const expected = readable(user, suite.tenant, target);
            const rest = await fetch(`${suite.documentUrl}/v1/documents/${target.id}`, {
              headers: { authorization: `Bearer ${token}` },
            });
            expect({ where, doc: target.id, status: rest.status }).toEqual({
              where,
              doc: target.id,
              status: expected ? 200 : 404,
            });
            const grpc = await grpcGetDocument(client, token, target.id).then(
              () => status.OK,
              (error: { code: status }) => error.code,
            );
            expect({ where, doc: target.id, grpc }).toEqual({
              where,
              doc: target.id,
              grpc: expected ? status.OK : status.NOT_FOUND,
            });
            checks += 1;
            break;
          }
          case 'list-documents': {
            const scoped = draw() < 0.4;
            if (scoped) {
              check(
                `${where} ${SCOPED_KB}`,
                user,
                await listAll(token, `/v1/knowledge-bases/${SCOPED_KB}/documents`),
                visible((d) => d.scoped),
              );
            } else if (draw() < 0.5) {
              check(where, user, await listAll(token, '/v1/documents'), visible());
            } else {
              const ids: string[] = [];
              let pageToken = '';
              do {
                const page = await grpcListDocuments(client, token, { pageSize: 5, pageToken });
                ids.push(...page.documents.map((d) => d.id));
                pageToken = page.nextPageToken;
              } while (pageToken);
              check(`${where} (gRPC)`, user, ids, visible());
            }
            break;
          }
        }
      }
    } finally {
      client.close();
    }
    // Reached only when every check above held: any leak fails the test at its round.
    process.stdout.write(
      `${JSON.stringify({ acl_oracle: { seed, rounds, checks, leaks: 0, probes: counts } })}\n`,
    );
  }

  // A round is a few requests; the benchmark mode (KB_ACL_ROUNDS) needs a matching time limit.
  const roundsTimeout = Math.max(300_000, ROUNDS * 200);

  it(
    'never returns what the caller may not read, and finds what they may (fixed seed)',
    () => checkRounds(SEED, ROUNDS),
    roundsTimeout,
  );

  it(
    'holds for a seed from KB_ACL_SEED or a fresh one',
    () => checkRounds(RUN_SEED, ROUNDS),
    roundsTimeout,
  );

  it('keeps tenants apart even for their admins', async () => {
    const client = kbClient(`127.0.0.1:${suite.ports['query-service']!.grpcPort}`);
    const token = await testToken({ tenant: other, user: 'root', roles: ['admin'] });
    const response = await grpcSearch(client, token, { query: 'quarterly planning', topK: 50 });
    client.close();
    const tenants = response.hits.map((h) => docs.find((d) => d.id === h.documentId)?.tenant);
    expect(new Set(tenants)).toEqual(new Set([other]));
  });

  it('applies a revoked group membership and a narrowed document ACL within the bound, cached results included', async () => {
    const client = kbClient(`127.0.0.1:${suite.ports['query-service']!.grpcPort}`);
    try {
      const reader = { name: 'revoke-me', roles: ['viewer'], tokenGroups: [], adminGroups: [] };
      const token = await tokenOf(reader);
      const upload = await suite.upload(
        'revocable.txt',
        'Revocable memo about the zqrevocable launch.',
        'text/plain',
        suite.tenant,
        { acl: { groups: ['g-revocable'] } },
      );
      const { id } = (await upload.json()) as { id: string };
      await waitFor(
        () => suite.getDocument(id),
        (d) => d.status === 'indexed',
        60_000,
      );
      const add = await fetch(`${aclUrl()}/v1/acl/groups/g-revocable/members`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(await admin()) },
        body: JSON.stringify({ user: reader.name }),
      });
      expect(add.status).toBe(200);
      const search = () => grpcSearch(client, token, { query: 'zqrevocable', topK: 5, mode: 3 });
      const visible = await waitFor(search, (r) => r.hits.some((h) => h.documentId === id), 10_000);
      expect(visible.hits.some((h) => h.documentId === id)).toBe(true);
      expect((await search()).cacheHit).toBe(true); // now cached for this principal set

      // 1. Revoke the membership: visible again only as long as the bound allows.
      const revokedAt = Date.now();
      const removal = await fetch(`${aclUrl()}/v1/acl/groups/g-revocable/members/${reader.name}`, {
        method: 'DELETE',
        headers: await admin(),
      });
      expect(removal.status).toBe(200);
      await waitFor(search, (r) => !r.hits.some((h) => h.documentId === id), 10_000);
      const membershipMs = Date.now() - revokedAt;

      // 2. Grant directly, then narrow the document's ACL to its owner.
      const grant = await fetch(`${suite.documentUrl}/v1/documents/${id}/acl`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...(await suite.auth()) },
        body: JSON.stringify({ users: [reader.name] }),
      });
      expect(grant.status).toBe(200);
      await waitFor(search, (r) => r.hits.some((h) => h.documentId === id), 10_000);
      const narrowedAt = Date.now();
      const narrow = await fetch(`${suite.documentUrl}/v1/documents/${id}/acl`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...(await suite.auth()) },
        body: JSON.stringify({}),
      });
      expect(narrow.status).toBe(200);
      await waitFor(search, (r) => !r.hits.some((h) => h.documentId === id), 10_000);
      const aclMs = Date.now() - narrowedAt;
      process.stdout.write(
        `revocation applied after ${membershipMs} ms (membership), ${aclMs} ms (document ACL)\n`,
      );
      // The stated bound (docs/adr/0008): AUTHZ_CACHE_TTL_MS (2 s) plus event delivery.
      expect(membershipMs).toBeLessThan(5_000);
      expect(aclMs).toBeLessThan(5_000);
    } finally {
      client.close();
    }
  });

  it('answers 401 without a token, 404 for an unreadable document, 403 for a forbidden write', async () => {
    const noToken = await fetch(`${suite.queryUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'anything' }),
    });
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toMatchObject({ error: { code: 'unauthenticated' } });
    const forged = await fetch(`${suite.queryUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer not.a.jwt' },
      body: JSON.stringify({ query: 'anything' }),
    });
    expect(forged.status).toBe(401);

    const client = kbClient(`127.0.0.1:${suite.ports['query-service']!.grpcPort}`);
    await expect(grpcSearch(client, '', { query: 'anything' })).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
    });
    const secret = docs.find(
      (d) => d.tenant === suite.tenant && !readable(users[0]!, suite.tenant, d),
    );
    if (secret) {
      const hidden = await fetch(`${suite.documentUrl}/v1/documents/${secret.id}`, {
        headers: { authorization: `Bearer ${await tokenOf(users[0]!)}` },
      });
      expect(hidden.status).toBe(404);
      await expect(
        grpcGetDocument(client, await tokenOf(users[0]!), secret.id),
      ).rejects.toMatchObject({ code: status.NOT_FOUND });
    }
    client.close();

    const viewer = await suite.upload(
      'viewer.txt',
      'A viewer may not upload.',
      'text/plain',
      suite.tenant,
      {
        caller: { user: 'vera', roles: ['viewer'] },
      },
    );
    expect(viewer.status).toBe(403);
    expect(await viewer.json()).toMatchObject({ error: { code: 'permission_denied' } });
    const notAdmin = await fetch(`${aclUrl()}/v1/acl/policy`, { headers: await suite.auth() });
    expect(notAdmin.status).toBe(403);
  });

  it('honours per-document write and delete grants beside the tenant-wide roles (ADR 54)', async () => {
    const uploaded = await suite.upload(
      'granted.txt',
      'A document with grants of its own.',
      'text/plain',
      suite.tenant,
      {
        caller: { user: 'owen', roles: ['editor'] },
        acl: {
          users: [],
          groups: [],
          roles: [],
          tenant: false,
          writers: { users: ['wes'], groups: [] },
          deleters: { users: [], groups: ['cleanup'] },
        },
      },
    );
    expect(uploaded.status).toBe(202);
    const { id } = (await uploaded.json()) as { id: string };
    const as = async (caller: object, method: string, body?: object) =>
      fetch(`${suite.documentUrl}/v1/documents/${id}`, {
        method,
        headers: {
          'content-type': 'application/json',
          ...(await suite.auth({ roles: ['viewer'], ...caller })),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    // Viewers by role: the writer may edit it, not delete it; the deleters' group may delete it.
    expect((await as({ user: 'wes' }, 'PATCH', { tags: ['reviewed'] })).status).toBe(200);
    const refused = await as({ user: 'wes' }, 'DELETE');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: 'permission_denied' } });
    expect((await as({ user: 'vera' }, 'PATCH', { tags: ['x'] })).status).toBe(404);
    expect((await as({ user: 'dee', groups: ['cleanup'] }, 'DELETE')).status).toBe(200);
  });

  it('records searches with what they returned, and permission changes, for admins to query', async () => {
    const user = users[1]!;
    const token = await tokenOf(user);
    const client = kbClient(`127.0.0.1:${suite.ports['query-service']!.grpcPort}`);
    const response = await grpcSearch(client, token, { query: 'audited budgets query', topK: 5 });
    client.close();
    const audit = async (query: string) =>
      (await (await fetch(`${aclUrl()}/v1/audit?${query}`, { headers: await admin() })).json()) as {
        items: Array<{
          actor: string;
          action: string;
          detail: string;
          documentIds: string[];
          chunks: string[];
        }>;
      };
    const searches = await waitFor(
      () => audit(`user=${user.name}&action=search`),
      (r) => r.items.some((i) => i.detail === 'audited budgets query'),
      15_000,
    );
    const entry = searches.items.find((i) => i.detail === 'audited budgets query')!;
    expect(entry.documentIds.sort()).toEqual(
      [...new Set(response.hits.map((h) => h.documentId))].sort(),
    );
    expect(entry.chunks).toHaveLength(response.hits.length);
    const changes = await audit('action=policy_changed');
    expect(
      changes.items.some((i) => i.actor === 'root' && i.detail.includes('group_member_added')),
    ).toBe(true);
    const denied = await fetch(`${aclUrl()}/v1/audit`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(denied.status).toBe(403);
  });
});
