/**
 * A PostgreSQL role per service, locally (docs/adr/0031, "Locally"; review N11): scripts/infra/up.sh
 * creates the roles and their grants, and the launcher gives each service its own role's URLs.
 * The seven services boot through the launcher, each connection of theirs is seen in
 * pg_stat_activity under the service's role, and each role is refused the other services'
 * schemas. The tests' own reads keep the admin DATABASE_URL.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { type Kysely, type Migration, sql } from 'kysely';
import { Client, type DatabaseError } from 'pg';

import {
  DATABASE_ROLES,
  databaseEnv,
  type RunningService,
  SERVICES,
  startService,
  stopServices,
  waitReady,
} from '../support/services';
import { suitePorts, testToken } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(240_000);

const ADMIN_URL = process.env['DATABASE_URL']!;
const ADMIN_VECTOR_URL = process.env['VECTOR_DATABASE_URL']!;
/** The launcher's settings with the per-service roles on, whatever this shell says. */
const rolesOn = { ...process.env, KB_SHARED_DB_ROLE: '' };
const urlOf = (service: string): string => databaseEnv(service, rolesOn).DATABASE_URL!;
const vectorUrlOf = (service: string): string => databaseEnv(service, rolesOn).VECTOR_DATABASE_URL!;
const probe = `roles_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
/** The schema each service with one owns (DB_SCHEMA defaults, embedding_cache, search_index). */
const SCHEMAS: Record<string, string> = {
  'document-service': 'document_service',
  'embedding-service': 'embedding_cache',
  'indexing-service': 'search_index',
  'acl-service': 'acl_service',
  'webhook-service': 'webhook_service',
};

/** Runs `text` on a fresh connection at `url`; resolves to its rows or rejects with its error. */
async function run<T = Record<string, unknown>>(url: string, text: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

/** 'ok', or the SQLSTATE `text` fails with at `url` (42501: insufficient_privilege). */
async function outcome(url: string, text: string): Promise<string> {
  return run(url, text).then(
    () => 'ok',
    (error: DatabaseError) => error.code ?? String(error),
  );
}

describe('a PostgreSQL role per service (local)', () => {
  const ports = suitePorts(5600);
  /** application_name → the (user, database) pairs its connections were seen with. */
  const seen = new Map<string, Set<string>>();
  let services: RunningService[] = [];
  let watching = true;
  let watcher: Promise<void> = Promise.resolve();

  beforeAll(async () => {
    expect(process.env['KB_SHARED_DB_ROLE'] ?? '').not.toBe('1');
    // Each service's connections carry its name (application_name in the URLs the launcher is
    // given; a URL's parameters take precedence over the pools' own), so the watcher can tell
    // them apart from everything else on the server.
    const admin = new Client({ connectionString: ADMIN_URL });
    await admin.connect();
    watcher = (async () => {
      while (watching) {
        const { rows } = await admin.query<{ app: string; usename: string; datname: string }>(
          `SELECT application_name AS app, usename, datname FROM pg_stat_activity
            WHERE application_name LIKE '${probe}:%' AND usename IS NOT NULL`,
        );
        for (const row of rows) {
          const service = row.app.slice(probe.length + 1);
          if (!seen.has(service)) seen.set(service, new Set());
          seen.get(service)!.add(`${row.usename}@${row.datname}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await admin.end();
    })();
    const logDir = join(process.env['KB_HOME'] ?? '/tmp', 'logs', 'e2e-roles');
    mkdirSync(logDir, { recursive: true });
    services = SERVICES.map((s) =>
      startService(s.name, {
        env: {
          ...process.env,
          DATABASE_URL: `${ADMIN_URL}?application_name=${probe}:${s.name}`,
          VECTOR_DATABASE_URL: `${ADMIN_VECTOR_URL}?application_name=${probe}:${s.name}`,
        },
        ports,
        logDir,
      }),
    );
    // Ready means migrated: each service with a schema migrated it with its own role at boot.
    await waitReady(services);
  });

  afterAll(async () => {
    watching = false;
    await watcher;
    await stopServices(services);
    await run(ADMIN_URL, `DROP SCHEMA IF EXISTS ${probe} CASCADE`);
    await run(ADMIN_URL, `DROP TABLE IF EXISTS search_index.${probe}`);
    await run(ADMIN_VECTOR_URL, `DROP TABLE IF EXISTS public.${probe}`);
  });

  it('runs each service as its own role, parser-service with no database', async () => {
    // An upload goes through every service that keeps state, and a search reads both indexes.
    const token = await testToken({ tenant: probe, user: 'tester', roles: ['editor'] });
    const form = new FormData();
    form.append(
      'file',
      new Blob(['# Roles\n\nLighthouses guide ships.'], { type: 'text/markdown' }),
      'roles.md',
    );
    form.append('title', 'roles');
    const documentUrl = `http://127.0.0.1:${ports['document-service']!.port}`;
    const uploaded = await fetch(`${documentUrl}/v1/documents`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(uploaded.status).toBe(202);
    const { id } = (await uploaded.json()) as { id: string };
    await waitFor(
      async () =>
        (await (
          await fetch(`${documentUrl}/v1/documents/${id}`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).json()) as { status: string },
      (d) => d.status === 'indexed' || d.status === 'failed',
      90_000,
    ).then((d) => expect(d.status).toBe('indexed'));
    const search = await fetch(`http://127.0.0.1:${ports['query-service']!.port}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: 'lighthouses guide ships', topK: 3 }),
    });
    expect(search.status).toBe(200);
    const hits = ((await search.json()) as { hits: Array<{ documentId: string }> }).hits;
    expect(hits.map((h) => h.documentId)).toContain(id);

    const database = new URL(ADMIN_URL).pathname.slice(1);
    const vectors = new URL(ADMIN_VECTOR_URL).pathname.slice(1);
    const expected: Record<string, string[]> = {};
    for (const [service, { role, vectors: usesVectors }] of Object.entries(DATABASE_ROLES)) {
      expected[service] = [`${role}@${database}`, ...(usesVectors ? [`${role}@${vectors}`] : [])];
    }
    const observed = Object.fromEntries(
      [...seen].map(([service, pairs]) => [service, [...pairs].sort()]),
    );
    expect(observed).toEqual(
      Object.fromEntries(Object.entries(expected).map(([s, pairs]) => [s, pairs.sort()])),
    );
  });

  it("refuses one service's role another service's schema", async () => {
    // The review's case: document-service reading the webhook signing secrets.
    expect(await outcome(urlOf('document-service'), 'SELECT * FROM webhook_service.webhooks')).toBe(
      '42501',
    );
    expect(await outcome(urlOf('acl-service'), 'SELECT * FROM document_service.documents')).toBe(
      '42501',
    );
    expect(await outcome(urlOf('query-service'), 'SELECT * FROM acl_service.audit_log')).toBe(
      '42501',
    );
    for (const service of Object.keys(DATABASE_ROLES)) {
      for (const [owner, schema] of Object.entries(SCHEMAS)) {
        // query-service reads search_index, document-service bumps its generations (ADR 31).
        const reads =
          owner === service ||
          (schema === 'search_index' && ['query-service', 'document-service'].includes(service));
        const [row] = await run<{ usage: boolean; create: boolean }>(
          urlOf(service),
          `SELECT has_schema_privilege('${schema}', 'USAGE') AS usage,
                  has_schema_privilege('${schema}', 'CREATE') AS create`,
        );
        expect({ service, schema, ...row }).toEqual({
          service,
          schema,
          usage: reads,
          create: owner === service,
        });
      }
    }
  });

  it('lets document-service bump search_index.generations and read nothing else there', async () => {
    const [row] = await run<Record<string, boolean>>(
      urlOf('document-service'),
      `SELECT has_table_privilege('search_index.generations', 'SELECT, INSERT, UPDATE') AS bump,
              has_table_privilege('search_index.generations', 'DELETE') AS delete,
              has_table_privilege('search_index.chunks', 'SELECT') AS chunks`,
    );
    expect(row).toEqual({ bump: true, delete: false, chunks: false });
  });

  it('lets a role migrate a schema of its own, which the other roles cannot read', async () => {
    const create: Migration = {
      async up(db: Kysely<unknown>): Promise<void> {
        await sql`CREATE TABLE secrets (id int PRIMARY KEY, value text)`.execute(db);
        await sql`INSERT INTO secrets VALUES (1, 'webhook')`.execute(db);
      },
    };
    const pool = createPool({ url: urlOf('webhook-service'), schema: probe, maxConnections: 1 });
    const db = createDatabase<unknown>(pool);
    try {
      // CREATE SCHEMA IF NOT EXISTS needs CREATE on the database (ADR 31).
      const { applied } = await migrateToLatest(db, probe, { '20261126T1700_create': create });
      expect(applied).toEqual(['20261126T1700_create']);
    } finally {
      await db.destroy();
    }
    expect(await run(urlOf('webhook-service'), `SELECT value FROM ${probe}.secrets`)).toEqual([
      { value: 'webhook' },
    ]);
    for (const service of ['document-service', 'query-service', 'indexing-service']) {
      expect(await outcome(urlOf(service), `SELECT * FROM ${probe}.secrets`)).toBe('42501');
    }
  });

  it('lets query-service read what indexing-service writes, in search_index and kb_vectors', async () => {
    for (const [writer, reader, table] of [
      [urlOf('indexing-service'), urlOf('query-service'), `search_index.${probe}`],
      [vectorUrlOf('indexing-service'), vectorUrlOf('query-service'), `public.${probe}`],
    ] as const) {
      await run(writer, `CREATE TABLE ${table} (id int)`);
      await run(writer, `INSERT INTO ${table} VALUES (1)`);
      expect(await run(reader, `SELECT id FROM ${table}`)).toEqual([{ id: 1 }]);
      expect(await outcome(reader, `INSERT INTO ${table} VALUES (2)`)).toBe('42501');
      expect(await outcome(reader, `DELETE FROM ${table}`)).toBe('42501');
    }
    // The other services cannot even connect to the vector database.
    const vectors = new URL(ADMIN_VECTOR_URL).pathname;
    for (const service of ['document-service', 'webhook-service', 'acl-service']) {
      const url = new URL(urlOf(service));
      url.pathname = vectors;
      expect(await outcome(url.toString(), 'SELECT 1')).toBe('42501');
    }
  });

  it('keeps the shared URLs with KB_SHARED_DB_ROLE=1', () => {
    const shared = { ...process.env, KB_SHARED_DB_ROLE: '1' };
    for (const s of SERVICES) {
      expect(databaseEnv(s.name, shared)).toEqual({
        DATABASE_URL: ADMIN_URL,
        VECTOR_DATABASE_URL: ADMIN_VECTOR_URL,
      });
    }
    expect(databaseEnv('parser-service', rolesOn)).toEqual({
      DATABASE_URL: undefined,
      VECTOR_DATABASE_URL: undefined,
    });
  });
});
