import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { mintToken, type TokenClaims } from '@kb/auth';
import { S3BlobStore } from '@kb/storage';
import { PgVectorStore } from '@kb/vector-store';

import { OtlpCollector } from './otlp-collector';
import { type RunningService, startServices, stopServices, waitReady } from './services';

/** A markdown document whose chunks the end-to-end suites search for. */
export const MISSIONS_DOCUMENT = [
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

export type Ports = Record<string, { port: number; grpcPort?: number }>;

/**
 * The seven services on ports `base + 1 … base + 7` (gRPC on 20000 + base % 10000 + 51 and + 61:
 * modulo 1000, every base that is a multiple of 1000 shared one pair of gRPC ports, so two such
 * suites running at once collided). Every port stays below Linux's ephemeral range (32768–60999):
 * a port in it can already be the local end of some outgoing connection, and the service then
 * fails to bind at boot.
 */
export function suitePorts(base: number): Ports {
  return {
    'document-service': { port: base + 1 },
    'parser-service': { port: base + 2 },
    'embedding-service': { port: base + 3 },
    'indexing-service': { port: base + 4 },
    'query-service': { port: base + 5, grpcPort: 20_000 + (base % 10_000) + 51 },
    'acl-service': { port: base + 6, grpcPort: 20_000 + (base % 10_000) + 61 },
    'webhook-service': { port: base + 7 },
  };
}

/**
 * One end-to-end suite: its own tenant, the seven services as OS processes (small chunks, a 1 MiB
 * upload limit, traces exported to an in-test OTLP collector), and clients for the public APIs.
 * Registers beforeAll/afterAll; call it at the top of a describe block.
 */
/** A bearer token for a test caller, signed with the suite's local secret. */
export function testToken(claims: TokenClaims): Promise<string> {
  const secret = process.env['AUTH_JWT_SECRET'];
  if (!secret) throw new Error('AUTH_JWT_SECRET is not set: source scripts/infra/env.sh');
  return mintToken(claims, secret);
}

/**
 * `overrides`: settings of the services for this suite only (e.g. low rate limits), or a function
 * of the suite's tenant when a setting names it (e.g. SOURCE_ALLOWLIST).
 */
export function useSuite(
  name: string,
  basePort: number,
  overrides: Record<string, string> | ((tenant: string) => Record<string, string>) = {},
) {
  const env = process.env;
  /** The suite's default caller: an editor, who reads what they upload. */
  let token = '';
  const ports = suitePorts(basePort);
  const tenant = `${name}-${randomUUID().slice(0, 8)}`;
  const documentUrl = `http://127.0.0.1:${ports['document-service']!.port}`;
  const queryUrl = `http://127.0.0.1:${ports['query-service']!.port}`;
  const webhookUrl = `http://127.0.0.1:${ports['webhook-service']!.port}`;
  const collector = new OtlpCollector();
  const blobs = new S3BlobStore({
    endpoint: env['S3_ENDPOINT'],
    region: env['S3_REGION'] ?? 'us-east-1',
    bucket: env['S3_BUCKET'] ?? 'kb-documents',
    accessKeyId: env['S3_ACCESS_KEY_ID'],
    secretAccessKey: env['S3_SECRET_ACCESS_KEY'],
  });
  const vectors = new PgVectorStore({ url: env['VECTOR_DATABASE_URL']! });
  /** Where document-service spools uploads: empty whenever no upload is in flight. */
  const uploadDir = mkdtempSync(join(tmpdir(), `kb-e2e-${name}-uploads-`));
  let services: RunningService[] = [];

  beforeAll(async () => {
    const logDir = join(env['KB_HOME'] ?? '/tmp', 'logs', `e2e-${name}`);
    mkdirSync(logDir, { recursive: true });
    const otlpEndpoint = await collector.start();
    services = startServices({
      env: {
        ...env,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint,
        CHUNK_SIZE: '300',
        CHUNK_OVERLAP: '60',
        // A second model for knowledge bases to name: the FAKE test embedder (docs/adr/0012).
        EMBEDDING_EXTRA_MODELS: 'test-hashing-384',
        MAX_UPLOAD_BYTES: String(1024 * 1024),
        UPLOAD_TMP_DIR: uploadDir,
        ...(typeof overrides === 'function' ? overrides(tenant) : overrides),
      },
      ports,
      logDir,
    });
    await waitReady(services);
    await vectors.ensureReady(384); // all-MiniLM-L6-v2
    token = await testToken({ tenant, user: 'tester', roles: ['editor'] });
  });

  /** Authorization header of the default caller, or of another one. */
  const auth = async (claims?: Partial<TokenClaims>): Promise<{ authorization: string }> => ({
    authorization: `Bearer ${
      claims ? await testToken({ tenant, user: 'tester', roles: ['editor'], ...claims }) : token
    }`,
  });

  afterAll(async () => {
    await stopServices(services);
    await collector.stop();
    await vectors.close();
    blobs.destroy();
    rmSync(uploadDir, { recursive: true, force: true });
  });

  const upload = async (
    filename: string,
    body: string | Buffer,
    type: string,
    asTenant = tenant,
    fields: {
      tags?: string[];
      knowledgeBaseIds?: string[];
      metadata?: object;
      acl?: object;
      caller?: Partial<TokenClaims>;
    } = {},
  ) => {
    const form = new FormData();
    form.append('file', new Blob([body], { type }), filename);
    form.append('title', `title of ${filename}`);
    form.append('metadata', JSON.stringify(fields.metadata ?? { source: 'e2e' }));
    if (fields.tags) form.append('tags', JSON.stringify(fields.tags));
    if (fields.acl) form.append('acl', JSON.stringify(fields.acl));
    if (fields.knowledgeBaseIds) {
      form.append('knowledge_base_ids', JSON.stringify(fields.knowledgeBaseIds));
    }
    return fetch(`${documentUrl}/v1/documents`, {
      method: 'POST',
      body: form,
      headers: asTenant ? await auth({ ...fields.caller, tenant: asTenant }) : {},
    });
  };

  const getDocument = async (id: string) => {
    const response = await fetch(`${documentUrl}/v1/documents/${id}`, {
      headers: await auth(),
    });
    return (await response.json()) as Record<string, unknown> & { status: string };
  };

  const search = async (body: object) => {
    const response = await fetch(`${queryUrl}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await auth()) },
      body: JSON.stringify(body),
    });
    return (await response.json()) as {
      cache: string;
      degraded: boolean;
      nextOffset?: number;
      hits: Array<{ documentId: string; text: string; strategies: string[] }>;
      error?: { code: string; message: string };
    };
  };

  return {
    env,
    ports,
    /** The OS process id of one of the suite's services (e.g. to read its memory). */
    pidOf: (service: string): number | undefined =>
      services.find((running) => running.name === service)?.child.pid,
    tenant,
    auth,
    /** The default caller's bearer token (set once the services are up). */
    get token() {
      return token;
    },
    documentUrl,
    queryUrl,
    webhookUrl,
    collector,
    blobs,
    vectors,
    uploadDir,
    upload,
    getDocument,
    search,
  };
}
