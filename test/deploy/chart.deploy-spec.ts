/**
 * The Helm chart, checked offline with the real tools `scripts/infra/install-tools.sh` installs:
 * `helm lint --strict`, `helm template` with the default and a production-like values file,
 * kubernetes-validate against the bundled Kubernetes JSON schemas, and the rules that keep a pod
 * from failing at 3 a.m.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

jest.setTimeout(60_000);

const ROOT = join(__dirname, '..', '..');
const CHART = join(ROOT, 'helm', 'knowledge-base');
const PRODUCTION = join(CHART, 'ci', 'production-values.yaml');
const KB_HOME = process.env['KB_HOME'] ?? join(process.env['HOME'] ?? '', '.cache', 'kb');
const HELM = join(KB_HOME, 'bin', 'helm');
const VALIDATE = join(KB_HOME, 'venv', 'bin', 'kubernetes-validate');
const KUBERNETES_VERSION = '1.33.0';

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
}
interface Container {
  name: string;
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  livenessProbe?: unknown;
  readinessProbe?: unknown;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { runAsNonRoot?: boolean };
}

/**
 * Variables each service refuses to boot without: the non-defaulted, non-optional fields of its
 * config schema (apps/<service>/src/config), plus VECTOR_DATABASE_URL or PINECONE_* for the
 * services that open the vector store (vectorStoreFromEnv throws without them).
 */
const REQUIRED_ENV: Record<string, (backend: string) => string[]> = {
  'document-service': () => ['DATABASE_URL', 'KAFKA_BROKERS'],
  'parser-service': () => ['KAFKA_BROKERS'],
  'embedding-service': () => ['KAFKA_BROKERS', 'EMBEDDING_MODEL_DIR'],
  'indexing-service': (backend) => ['KAFKA_BROKERS', 'DATABASE_URL', ...vectorEnv(backend)],
  'query-service': (backend) => ['DATABASE_URL', 'EMBEDDING_MODEL_DIR', ...vectorEnv(backend)],
  'acl-service': () => [],
};
const vectorEnv = (backend: string): string[] =>
  backend === 'pgvector' ? ['VECTOR_DATABASE_URL'] : ['PINECONE_API_KEY', 'PINECONE_INDEX_HOST'];

const render = (...args: string[]): { yaml: string; objects: K8sObject[] } => {
  const yaml = execFileSync(HELM, ['template', 'kb', CHART, ...args], { encoding: 'utf8' });
  const objects = parseAllDocuments(yaml)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
  return { yaml, objects };
};

const podContainers = (object: K8sObject): Container[] => {
  const template = (object.spec?.['template'] as { spec: { containers: Container[] } } | undefined)
    ?.spec;
  return template?.containers ?? [];
};

describe.each([
  ['default values', [] as string[], 'pgvector'],
  ['production-like values', ['-f', PRODUCTION], 'pinecone'],
])('helm chart with %s', (_label, args, backend) => {
  const { yaml, objects } = render(...args);

  it('passes helm lint --strict', () => {
    const lint = spawnSync(HELM, ['lint', '--strict', CHART, ...args], { encoding: 'utf8' });
    expect(lint.stdout).toContain('0 chart(s) failed');
    expect(lint.status).toBe(0);
  });

  it('renders objects that validate against the Kubernetes schemas', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-chart-'));
    const file = join(dir, 'rendered.yaml');
    // ServiceMonitor is a CRD: the bundled schemas cover built-in kinds only.
    const builtIn = parseAllDocuments(yaml).filter(
      (d) => (d.toJS() as K8sObject | null)?.kind !== 'ServiceMonitor',
    );
    writeFileSync(file, builtIn.map((d) => d.toString()).join('---\n'));
    const result = spawnSync(VALIDATE, ['-k', KUBERNETES_VERSION, '--strict', '--quiet', file], {
      encoding: 'utf8',
    });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('gives every container probes (Deployments), requests and limits, and runAsNonRoot', () => {
    const workloads = objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job');
    expect(objects.filter((o) => o.kind === 'Deployment')).toHaveLength(6);
    for (const workload of workloads) {
      for (const container of podContainers(workload)) {
        if (workload.kind === 'Deployment') {
          expect(container.livenessProbe).toBeDefined();
          expect(container.readinessProbe).toBeDefined();
        }
        expect(Object.keys(container.resources?.requests ?? {}).sort()).toEqual(['cpu', 'memory']);
        expect(Object.keys(container.resources?.limits ?? {}).sort()).toEqual(['cpu', 'memory']);
        expect(container.securityContext?.runAsNonRoot).toBe(true);
      }
    }
  });

  it('sets every environment variable each service requires at boot', () => {
    for (const [service, required] of Object.entries(REQUIRED_ENV)) {
      const deployment = objects.find(
        (o) => o.kind === 'Deployment' && o.metadata.name.endsWith(service),
      );
      expect(deployment).toBeDefined();
      const env = podContainers(deployment!)[0]!.env ?? [];
      const set = env.filter((e) => e.value || e.valueFrom).map((e) => e.name);
      expect(set).toEqual(expect.arrayContaining(required(backend)));
    }
  });

  it('runs migrations as a pre-install/pre-upgrade hook and exposes gRPC on query-service', () => {
    const job = objects.find((o) => o.kind === 'Job') as
      (K8sObject & { metadata: { annotations?: Record<string, string> } }) | undefined;
    expect(job?.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    const query = objects.find(
      (o) => o.kind === 'Service' && o.metadata.name.endsWith('query-service'),
    );
    expect(JSON.stringify(query?.spec)).toContain('"grpc"');
  });
});

describe('values.schema.json', () => {
  it('rejects an unknown vector-store backend', () => {
    const result = spawnSync(
      HELM,
      ['template', 'kb', CHART, '--set', 'vectorStore.backend=faiss'],
      { encoding: 'utf8' },
    );
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/vectorStore.*backend|backend.*must be one of/);
  });

  it('names the missing setting when a required secret value is absent', () => {
    const result = spawnSync(HELM, ['template', 'kb', CHART, '--set', 'postgres.url='], {
      encoding: 'utf8',
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('postgres.url (or postgres.existingSecret) is required');
  });
});
