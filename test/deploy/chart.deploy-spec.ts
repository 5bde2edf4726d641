/**
 * The Helm chart, checked offline with the real tools `scripts/infra/install-tools.sh` installs:
 * `helm lint --strict`, `helm template` with the default and a production-like values file,
 * kubeconform -strict against the Kubernetes JSON schemas (laid out from kubernetes-validate's
 * bundle) plus a local ServiceMonitor schema, and the rules that keep a pod from failing at 3 a.m.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseAllDocuments } from 'yaml';
import { z } from 'zod';

import { aclConfigSchema } from '../../apps/acl-service/src/config/acl.config';
import { documentConfigSchema } from '../../apps/document-service/src/config/document.config';
import { embeddingServiceConfigSchema } from '../../apps/embedding-service/src/config/embedding.config';
import { indexingConfigSchema } from '../../apps/indexing-service/src/config/indexing.config';
import { parserConfigSchema } from '../../apps/parser-service/src/config/parser.config';
import { queryConfigSchema } from '../../apps/query-service/src/config/query.config';
import { webhookConfigSchema } from '../../apps/webhook-service/src/config/webhook.config';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..');
const CHART = join(ROOT, 'helm', 'knowledge-base');
const PRODUCTION = join(CHART, 'ci', 'production-values.yaml');
/**
 * What the chart refuses to render without (docs/adr/0031), waived for development: plaintext
 * Kafka and Redis, an HS256 secret, one database role, no egress policy.
 */
const DEVELOPMENT = join(CHART, 'ci', 'development-values.yaml');
const DEV = ['-f', DEVELOPMENT];
const KB_HOME = process.env['KB_HOME'] ?? join(process.env['HOME'] ?? '', '.cache', 'kb');
const HELM = join(KB_HOME, 'bin', 'helm');
const KUBECONFORM = join(KB_HOME, 'bin', 'kubeconform');
const KUBERNETES_VERSION = '1.33.0';
// Both locations are local files: the built-in kinds, then the CRDs this chart renders.
const SCHEMA_LOCATIONS = [
  `${KB_HOME}/kubernetes-json-schema/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
  `${join(__dirname, 'schemas')}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
];
const SERVICES = [
  'document-service',
  'parser-service',
  'embedding-service',
  'indexing-service',
  'query-service',
  'acl-service',
  'webhook-service',
] as const;
/** The services that own a schema, in the order `npm run migrate` and the Job migrate them. */
const SCHEMA_SERVICES = [
  'document-service',
  'acl-service',
  'embedding-service',
  'indexing-service',
  'webhook-service',
];
type ServiceName = (typeof SERVICES)[number];

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Container {
  name: string;
  image?: string;
  command?: string[];
  env?: EnvVar[];
  envFrom?: Array<{ configMapRef?: { name: string } }>;
  ports?: Array<{ name: string; containerPort: number }>;
  livenessProbe?: { httpGet?: { path: string } };
  readinessProbe?: { httpGet?: { path: string } };
  startupProbe?: { httpGet?: { path: string } };
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: { runAsNonRoot?: boolean; seccompProfile?: { type: string } };
  terminationGracePeriodSeconds?: number;
  volumes?: Array<{
    name: string;
    emptyDir?: unknown;
    persistentVolumeClaim?: unknown;
    secret?: unknown;
  }>;
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown> & {
    template?: { metadata?: { labels?: Record<string, string> }; spec: PodSpec };
  };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/**
 * Variables each service refuses to boot without. The config schemas (apps/<service>/src/config)
 * reject a missing KAFKA_BROKERS or DATABASE_URL (no default, not optional); the test below checks
 * this table against them, so a new required variable fails here until the chart sets it.
 * VECTOR_DATABASE_URL and PINECONE_* are optional in the schema but vectorStoreFromEnv
 * (libs/vector-store) throws at boot without the ones its backend needs, TokenVerifier
 * (libs/auth) without AUTH_JWT_SECRET or AUTH_JWKS_URL at the public edges, and the embedding
 * settings are refined by provider (requireEmbeddingProviderSettings in libs/config).
 */
const REQUIRED_ENV: Record<
  ServiceName,
  (backend: string, auth: string, provider: string) => string[]
> = {
  'document-service': (_b, auth) => ['DATABASE_URL', 'KAFKA_BROKERS', auth],
  'parser-service': () => ['KAFKA_BROKERS'],
  'embedding-service': (_b, auth, provider) => ['KAFKA_BROKERS', ...modelEnv(provider), auth],
  'indexing-service': (backend) => ['KAFKA_BROKERS', 'DATABASE_URL', ...vectorEnv(backend)],
  'query-service': (backend, auth, provider) => [
    'DATABASE_URL',
    'KAFKA_BROKERS',
    ...modelEnv(provider),
    ...vectorEnv(backend),
    auth,
  ],
  'acl-service': (_b, auth) => ['DATABASE_URL', 'KAFKA_BROKERS', auth],
  'webhook-service': (_b, auth) => ['DATABASE_URL', 'KAFKA_BROKERS', 'WEBHOOK_SECRET_KEY', auth],
};
const vectorEnv = (backend: string): string[] =>
  backend === 'pgvector'
    ? ['VECTOR_DATABASE_URL']
    : ['PINECONE_API_KEY', 'PINECONE_INDEX_HOST', 'PINECONE_SPARSE_INDEX_HOST'];
const modelEnv = (provider: string): string[] =>
  provider === 'onnx'
    ? ['EMBEDDING_MODEL_DIR']
    : ['EMBEDDING_PROVIDER', 'EMBEDDING_API_URL', 'EMBEDDING_API_MODEL'];
const CONFIG_SCHEMAS: Record<ServiceName, z.ZodType> = {
  'document-service': documentConfigSchema,
  'parser-service': parserConfigSchema,
  'embedding-service': embeddingServiceConfigSchema,
  'indexing-service': indexingConfigSchema,
  'query-service': queryConfigSchema,
  'acl-service': aclConfigSchema,
  'webhook-service': webhookConfigSchema,
};

interface Rendered {
  yaml: string;
  objects: K8sObject[];
}
const render = (...args: string[]): Rendered => {
  const yaml = execFileSync(HELM, ['template', 'kb', CHART, ...args], { encoding: 'utf8' });
  const objects = parseAllDocuments(yaml)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
  return { yaml, objects };
};
const kubeconform = (yaml: string) => {
  const file = join(mkdtempSync(join(tmpdir(), 'kb-chart-')), 'rendered.yaml');
  writeFileSync(file, yaml);
  const args = ['-strict', '-summary', '-kubernetes-version', KUBERNETES_VERSION];
  for (const location of SCHEMA_LOCATIONS) args.push('-schema-location', location);
  return spawnSync(KUBECONFORM, [...args, file], { encoding: 'utf8' });
};
const templateFails = (...args: string[]) =>
  spawnSync(HELM, ['template', 'kb', CHART, ...args], { encoding: 'utf8' });

const find = (objects: K8sObject[], kind: string, suffix: string): K8sObject => {
  const object = objects.find((o) => o.kind === kind && o.metadata.name.endsWith(suffix));
  if (!object) throw new Error(`no ${kind} named *${suffix}`);
  return object;
};
const podSpec = (object: K8sObject): PodSpec => {
  const spec = object.spec?.template?.spec;
  if (!spec) throw new Error(`${object.kind} ${object.metadata.name} has no pod template`);
  return spec;
};
const allContainers = (spec: PodSpec): Container[] => [
  ...(spec.initContainers ?? []),
  ...spec.containers,
];

/** A container's environment as Kubernetes would resolve it: envFrom ConfigMaps, then env. */
const resolveEnv = (objects: K8sObject[], container: Container): Map<string, EnvVar> => {
  const env = new Map<string, EnvVar>();
  for (const source of container.envFrom ?? []) {
    const name = source.configMapRef?.name;
    const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === name);
    if (!configMap) throw new Error(`envFrom names ConfigMap ${name}, which is not rendered`);
    for (const [key, value] of Object.entries(configMap.data ?? {}))
      env.set(key, { name: key, value });
  }
  for (const variable of container.env ?? []) env.set(variable.name, variable);
  return env;
};

/** A Kubernetes memory quantity (Mi or Gi) in MiB. */
const mebibytes = (quantity: unknown): number => {
  const match = /^(\d+)(Mi|Gi)$/.exec(String(quantity));
  if (!match) throw new Error(`unexpected memory quantity ${String(quantity)}`);
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
};

/** A secretKeyRef must hit a key of a rendered Secret or a Secret the values say exists. */
const expectSecretRefResolves = (
  objects: K8sObject[],
  existingSecrets: string[],
  variable: EnvVar,
) => {
  const ref = variable.valueFrom?.secretKeyRef;
  if (!ref) return;
  if (existingSecrets.includes(ref.name)) return;
  const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === ref.name);
  expect({ env: variable.name, secret: ref.name, found: secret !== undefined }).toEqual({
    env: variable.name,
    secret: ref.name,
    found: true,
  });
  expect(Object.keys({ ...secret?.data, ...secret?.stringData })).toContain(ref.key);
};

it('the REQUIRED_ENV table lists every variable the config schemas require', () => {
  for (const service of SERVICES) {
    const result = CONFIG_SCHEMAS[service].safeParse({});
    const missing = result.success ? [] : result.error.issues.map((i) => String(i.path[0]));
    const required = REQUIRED_ENV[service]('pgvector', 'AUTH_JWT_SECRET', 'onnx');
    expect({ service, required }).toEqual({
      service,
      required: expect.arrayContaining(missing),
    });
  }
});

it('has its tools installed (bash scripts/infra/install-tools.sh)', () => {
  expect(existsSync(HELM)).toBe(true);
  expect(existsSync(KUBECONFORM)).toBe(true);
  expect(
    existsSync(join(KB_HOME, 'kubernetes-json-schema', `v${KUBERNETES_VERSION}-standalone-strict`)),
  ).toBe(true);
});

const MODEL_INIT = [
  '--set',
  'embedding.modelVolume.existingClaim=',
  '--set',
  'embedding.modelVolume.initContainer.image=kb/model:all-MiniLM-L6-v2-1',
];

/** Not a real key: it only has to reach the chart's Secret. */
const EMBEDDING_API = [
  '--set',
  'embedding.provider=openai',
  '--set',
  'embedding.api.url=http://embeddings.ai.svc:8080/v1',
  '--set',
  'embedding.api.model=nomic-embed-text',
  '--set',
  'embedding.api.apiKey=not-a-real-key',
  '--set',
  'embedding.api.rateLimitRpm=600',
];

/** The Secrets each values file names, which the operator creates (not rendered by the chart). */
const DEV_SECRETS = ['kb-auth', 'kb-webhook-secret-key'];
/** Short names of the production-like values' per-service database Secrets (kb-db-<short>). */
const DATABASE_ROLES: Record<string, string> = {
  'document-service': 'document',
  'embedding-service': 'embedding',
  'indexing-service': 'indexing',
  'query-service': 'query',
  'acl-service': 'acl',
  'webhook-service': 'webhook',
};
const PRODUCTION_SECRETS = [
  'kb-s3',
  'kb-pinecone',
  'kb-kafka',
  'kb-redis',
  'kb-webhook-secret-key',
  ...Object.values(DATABASE_ROLES).map((role) => `kb-db-${role}`),
];

describe.each([
  {
    label: 'development values',
    args: DEV,
    backend: 'pgvector',
    auth: 'AUTH_JWT_SECRET',
    existing: DEV_SECRETS,
    provider: 'onnx',
  },
  {
    label: 'production-like values',
    args: ['-f', PRODUCTION],
    backend: 'pinecone',
    auth: 'AUTH_JWKS_URL',
    existing: PRODUCTION_SECRETS,
    provider: 'onnx',
  },
  {
    label: 'a model initContainer',
    args: [...DEV, ...MODEL_INIT],
    backend: 'pgvector',
    auth: 'AUTH_JWT_SECRET',
    existing: DEV_SECRETS,
    provider: 'onnx',
  },
  {
    label: 'an OpenAI-compatible embedding API',
    args: [...DEV, ...EMBEDDING_API],
    backend: 'pgvector',
    auth: 'AUTH_JWT_SECRET',
    existing: DEV_SECRETS,
    provider: 'openai',
  },
])('helm chart with $label', ({ args, backend, auth, existing, provider }) => {
  const { yaml, objects } = render(...args);
  const deployments = objects.filter((o) => o.kind === 'Deployment');

  it('passes helm lint --strict', () => {
    const lint = spawnSync(HELM, ['lint', '--strict', CHART, ...args], { encoding: 'utf8' });
    expect(lint.stdout).toContain('0 chart(s) failed');
    expect(lint.status).toBe(0);
  });

  it('renders objects that kubeconform -strict validates offline, none skipped', () => {
    const result = kubeconform(yaml);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/Valid: \d+, Invalid: 0, Errors: 0, Skipped: 0/);
    expect(result.status).toBe(0);
  });

  it('renders a Deployment, Service, ConfigMap and PodDisruptionBudget per service', () => {
    for (const service of SERVICES) {
      for (const kind of ['Deployment', 'Service', 'ConfigMap', 'PodDisruptionBudget']) {
        expect(
          objects.filter((o) => o.kind === kind && o.metadata.name.includes(service)),
        ).toHaveLength(1);
      }
    }
    for (const service of SERVICES.filter((s) => s !== 'acl-service' && s !== 'webhook-service')) {
      const hpa = find(objects, 'HorizontalPodAutoscaler', service);
      expect(hpa.apiVersion).toBe('autoscaling/v2');
    }
  });

  it('gives every container probes (Deployments), requests and limits, and a locked-down context', () => {
    const workloads = objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job');
    expect(workloads.length).toBe(8);
    for (const workload of workloads) {
      const spec = podSpec(workload);
      expect(spec.securityContext?.runAsNonRoot).toBe(true);
      expect(spec.securityContext?.seccompProfile?.type).toBe('RuntimeDefault');
      // document-service's /tmp is the upload spool: bounded (review M7).
      expect(spec.volumes).toEqual(
        expect.arrayContaining([
          {
            name: 'tmp',
            emptyDir: workload.metadata.name.endsWith('document-service')
              ? { sizeLimit: '2Gi' }
              : {},
          },
        ]),
      );
      for (const container of allContainers(spec)) {
        const where = `${workload.metadata.name}/${container.name}`;
        expect({
          where,
          requests: Object.keys(container.resources?.requests ?? {}).sort(),
        }).toEqual({
          where,
          requests: ['cpu', 'memory'],
        });
        expect({ where, limits: Object.keys(container.resources?.limits ?? {}).sort() }).toEqual({
          where,
          limits: ['cpu', 'memory'],
        });
        expect({ where, ...container.securityContext }).toEqual({
          where,
          runAsNonRoot: true,
          runAsUser: 10001,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
      }
    }
    for (const deployment of deployments) {
      const [container] = podSpec(deployment).containers;
      expect(container?.livenessProbe?.httpGet?.path).toBe('/health/live');
      expect(container?.readinessProbe?.httpGet?.path).toBe('/health/ready');
      expect(container?.volumeMounts).toEqual(
        expect.arrayContaining([{ name: 'tmp', mountPath: '/tmp' }]),
      );
    }
  });

  it('sets every environment variable each service requires at boot, from resolvable sources', () => {
    for (const service of SERVICES) {
      const [container] = podSpec(find(objects, 'Deployment', service)).containers;
      const env = resolveEnv(objects, container!);
      const set = [...env.values()].filter((e) => e.value || e.valueFrom).map((e) => e.name);
      expect({ service, set }).toEqual({
        service,
        set: expect.arrayContaining(REQUIRED_ENV[service](backend, auth, provider)),
      });
      for (const variable of env.values()) expectSecretRefResolves(objects, existing, variable);
      expect(env.get('HOST')?.value).toBe('0.0.0.0');
      expect(env.get('PORT')?.value).toBe(String(container!.ports?.[0]?.containerPort));
    }
    const query = resolveEnv(
      objects,
      podSpec(find(objects, 'Deployment', 'query-service')).containers[0]!,
    );
    expect(query.get('GRPC_HOST')?.value).toBe('0.0.0.0');
    expect(query.get('GRPC_PORT')?.value).toBe('50051');
    const document = resolveEnv(
      objects,
      podSpec(find(objects, 'Deployment', 'document-service')).containers[0]!,
    );
    expect(document.get('MIGRATE_ON_START')?.value).toBe('false');
    // The Job migrates every schema, so no service with one migrates at start.
    for (const service of SCHEMA_SERVICES) {
      const env = resolveEnv(objects, podSpec(find(objects, 'Deployment', service)).containers[0]!);
      expect({ service, migrate: env.get('MIGRATE_ON_START')?.value }).toEqual({
        service,
        migrate: 'false',
      });
    }
  });

  it("gives query-service's Node a larger young generation, and no other service unasked", () => {
    const nodeOptions = (service: string) =>
      resolveEnv(objects, podSpec(find(objects, 'Deployment', service)).containers[0]!).get(
        'NODE_OPTIONS',
      )?.value;
    expect(nodeOptions('query-service')).toBe('--max-semi-space-size=32');
    expect(nodeOptions('document-service')).toBeUndefined();
  });

  it("bounds parser-service's extraction threads within its memory limit, with settings its config accepts", () => {
    const container = podSpec(find(objects, 'Deployment', 'parser-service')).containers[0]!;
    const env = resolveEnv(objects, container);
    const limits = parserConfigSchema
      .pick({
        PARSER_WORKERS: true,
        PARSER_WORKER_MAX_MEMORY_MB: true,
        PARSER_TIMEOUT_MS: true,
        PARSER_MAX_TEXT_CHARS: true,
        PARSER_ZIP_MAX_ENTRIES: true,
        PARSER_ZIP_MAX_INFLATED_MB: true,
        PARSER_MAX_ATTACHMENTS: true,
      })
      .strict()
      .parse(
        Object.fromEntries(
          [...env.values()]
            .filter((e) => e.name.startsWith('PARSER_'))
            .map((e) => [e.name, e.value]),
        ),
      );
    // Every bound is set by the chart (none left to a default), and the threads' heaps take at
    // most half the container: the main process holds the tokenizer and the text being chunked.
    expect(Object.values(limits).every((value) => Number.isInteger(value))).toBe(true);
    expect([...env.keys()].filter((k) => k.startsWith('PARSER_'))).toHaveLength(7);
    const memoryMib = mebibytes(container.resources?.limits?.['memory']);
    expect(limits.PARSER_WORKERS * limits.PARSER_WORKER_MAX_MEMORY_MB).toBeLessThanOrEqual(
      memoryMib / 2,
    );
  });

  it("sets every bound of parser-service's OCR pool, with values its config accepts", () => {
    const container = podSpec(find(objects, 'Deployment', 'parser-service')).containers[0]!;
    const env = resolveEnv(objects, container);
    const ocr = Object.fromEntries(
      [...env.values()].filter((e) => e.name.startsWith('OCR_')).map((e) => [e.name, e.value]),
    );
    const keys = Object.keys(parserConfigSchema.shape).filter((key) => key.startsWith('OCR_'));
    expect(Object.keys(ocr).sort()).toEqual(keys.sort());
    const parsed = parserConfigSchema
      .pick({
        OCR_LANGUAGES: true,
        OCR_WORKERS: true,
        OCR_WORKER_MAX_MEMORY_MB: true,
        PARSER_WORKERS: true,
        PARSER_WORKER_MAX_MEMORY_MB: true,
      })
      .parse(Object.fromEntries([...env.values()].map((e) => [e.name, e.value])));
    expect(parsed.OCR_LANGUAGES).toEqual(['eng']);
    // Every thread's heap, and about 100 MiB of tesseract's WebAssembly per OCR thread (ADR 50),
    // within 80 % of the container's limit.
    const threadsMib =
      parsed.PARSER_WORKERS * parsed.PARSER_WORKER_MAX_MEMORY_MB +
      parsed.OCR_WORKERS * (parsed.OCR_WORKER_MAX_MEMORY_MB + 100);
    expect(threadsMib).toBeLessThanOrEqual(
      0.8 * mebibytes(container.resources?.limits?.['memory']),
    );
  });

  // What the model services need depends on the provider: a model volume, or an API.
  if (provider === 'onnx') {
    it('mounts the model folder at EMBEDDING_MODEL_DIR and gives model loaders a startup probe', () => {
      for (const service of ['embedding-service', 'query-service']) {
        const spec = podSpec(find(objects, 'Deployment', service));
        const container = spec.containers[0]!;
        const dir = resolveEnv(objects, container).get('EMBEDDING_MODEL_DIR')?.value;
        expect(container.volumeMounts).toEqual(
          expect.arrayContaining([expect.objectContaining({ name: 'models', mountPath: dir })]),
        );
        expect(container.startupProbe?.httpGet?.path).toBe('/health/live');
        const volume = spec.volumes?.find((v) => v.name === 'models');
        if (volume?.emptyDir) {
          // Filled by an initContainer writing to the same path.
          const init = spec.initContainers?.[0];
          expect(init?.volumeMounts).toEqual(
            expect.arrayContaining([{ name: 'models', mountPath: dir }]),
          );
        } else {
          expect(volume?.persistentVolumeClaim).toBeDefined();
        }
      }
    });
  } else {
    it('points both model services at the embedding API, with its key from a Secret and no model volume', () => {
      for (const service of ['embedding-service', 'query-service']) {
        const spec = podSpec(find(objects, 'Deployment', service));
        const container = spec.containers[0]!;
        const env = resolveEnv(objects, container);
        expect({
          service,
          provider: env.get('EMBEDDING_PROVIDER')?.value,
          url: env.get('EMBEDDING_API_URL')?.value,
          model: env.get('EMBEDDING_API_MODEL')?.value,
          rpm: env.get('EMBEDDING_RATE_LIMIT_RPM')?.value,
          modelDir: env.get('EMBEDDING_MODEL_DIR'),
          keyRef: env.get('EMBEDDING_API_KEY')?.valueFrom?.secretKeyRef?.key,
        }).toEqual({
          service,
          provider: 'openai',
          url: 'http://embeddings.ai.svc:8080/v1',
          model: 'nomic-embed-text',
          rpm: '600',
          modelDir: undefined,
          keyRef: 'embedding-api-key',
        });
        expect(env.get('EMBEDDING_API_KEY')?.value).toBeUndefined(); // never in a ConfigMap
        if (service === 'query-service') {
          // The cross-encoder still runs in query-service, read from the model volume (ADR 44).
          expect(env.get('RERANKER_MODEL')?.value).toBe('ms-marco-MiniLM-L-12-v2');
          expect(spec.volumes?.map((v) => v.name)).toContain('models');
        } else {
          expect(spec.volumes?.map((v) => v.name)).not.toContain('models');
          expect(spec.initContainers).toBeUndefined();
        }
      }
      expect(yaml.match(/not-a-real-key/g)).toHaveLength(1); // in the Secret only
    });
  }

  it('runs migrations as a pre-install/pre-upgrade hook that can read its database URL', () => {
    const job = find(objects, 'Job', '-migrate');
    expect(job.metadata.annotations).toMatchObject({
      'helm.sh/hook': 'pre-install,pre-upgrade',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    });
    // Init containers run in order, each to success, before the last one: every schema, in
    // `npm run migrate`'s order, each from its own service's image.
    const spec = podSpec(job);
    const containers = [...(spec.initContainers ?? []), ...spec.containers];
    expect(containers.map((c) => c.command)).toEqual(
      SCHEMA_SERVICES.map((service) => ['node', `apps/${service}/dist/migrate.js`]),
    );
    expect(containers.map((c) => c.image)).toEqual(
      SCHEMA_SERVICES.map((service) => expect.stringContaining(`/${service}:`) as unknown),
    );
    const urls = backend === 'pgvector' ? ['VECTOR_DATABASE_URL'] : [];
    for (const [i, container] of containers.entries()) {
      const env = resolveEnv(objects, container);
      const indexing = SCHEMA_SERVICES[i] === 'indexing-service';
      for (const name of ['DATABASE_URL', ...(indexing ? urls : [])]) {
        const variable = env.get(name);
        expect({ container: container.name, name, set: variable !== undefined }).toEqual({
          container: container.name,
          name,
          set: true,
        });
        const ref = variable!.valueFrom?.secretKeyRef;
        if (!existing.includes(ref?.name ?? '')) {
          // Hooks run before the release's objects: the Secret it reads must be a hook, created first.
          const secret = find(objects, 'Secret', ref!.name);
          expect(secret.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
          expect(Number(secret.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(
            Number(job.metadata.annotations?.['helm.sh/hook-weight']),
          );
        }
        expectSecretRefResolves(objects, existing, variable!);
      }
      if (indexing && backend === 'pgvector') {
        expect(env.get('VECTOR_DIMENSIONS')?.value).toBe('384');
      }
    }
  });

  it('exposes HTTP on every Service and gRPC (50051, named grpc) on query-service and acl-service', () => {
    for (const service of SERVICES) {
      const ports = (find(objects, 'Service', service).spec?.['ports'] ?? []) as Array<{
        name: string;
        port: number;
      }>;
      const grpc = service === 'query-service' || service === 'acl-service';
      expect(ports.map((p) => p.name)).toEqual(grpc ? ['http', 'grpc'] : ['http']);
      if (grpc) expect(ports[1]?.port).toBe(50051);
    }
  });
});

describe('the cross-encoder (docs/adr/0044)', () => {
  it('loads ms-marco-MiniLM-L-12-v2 from the model volume by default, even with an embedding API', () => {
    const { objects } = render(...DEV, ...EMBEDDING_API);
    const spec = podSpec(find(objects, 'Deployment', 'query-service'));
    const env = resolveEnv(objects, spec.containers[0]!);
    expect(env.get('RERANKER_MODEL')?.value).toBe('ms-marco-MiniLM-L-12-v2');
    expect(env.get('RERANKER_MODEL_DIR')?.value).toBe('/models');
    expect(spec.volumes?.map((v) => v.name)).toContain('models');
  });

  it('is off with rerankerModel none: no setting, and no model volume without the onnx provider', () => {
    const { objects } = render(...DEV, ...EMBEDDING_API, '--set', 'search.rerankerModel=none');
    const spec = podSpec(find(objects, 'Deployment', 'query-service'));
    expect(resolveEnv(objects, spec.containers[0]!).get('RERANKER_MODEL')).toBeUndefined();
    expect(spec.volumes?.map((v) => v.name)).not.toContain('models');
  });
});

describe('optional objects', () => {
  it('are off by default and on in the production-like values (ingress with TLS)', () => {
    const optional = ['Ingress', 'ServiceMonitor'];
    expect(render(...DEV).objects.filter((o) => optional.includes(o.kind))).toEqual([]);
    const { objects } = render('-f', PRODUCTION);
    expect(
      objects
        .filter((o) => optional.includes(o.kind))
        .map((o) => o.kind)
        .sort(),
    ).toEqual(optional.sort());
    const ingress = find(objects, 'Ingress', 'knowledge-base');
    expect(ingress.spec?.['tls']).toEqual([{ hosts: ['kb.acme.internal'], secretName: 'kb-tls' }]);
    const monitor = find(objects, 'ServiceMonitor', 'knowledge-base');
    expect(monitor.spec?.['endpoints']).toEqual([
      expect.objectContaining({ port: 'http', path: '/metrics' }),
    ]);
  });

  it('turns the NetworkPolicy on by default: the release talks to itself, nothing else gets in', () => {
    // The development values only turn the egress policies off.
    const policies = render(...DEV).objects.filter((o) => o.kind === 'NetworkPolicy');
    expect(policies.map((p) => p.metadata.name)).toEqual(['kb-knowledge-base']);
    expect(policies[0]!.spec).toEqual({
      podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'kb' } },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'kb' } } }],
          ports: [
            { port: 3000, protocol: 'TCP' },
            { port: 50051, protocol: 'TCP' },
          ],
        },
      ],
    });
  });

  it('grants S3 sources nothing by default, and passes an operator allowlist as document-service reads it', () => {
    const sourceSettings = (...args: string[]) => {
      const { objects } = render(...DEV, ...args);
      const env = resolveEnv(
        objects,
        podSpec(find(objects, 'Deployment', 'document-service')).containers[0]!,
      );
      return documentConfigSchema.shape.SOURCE_ALLOWLIST.parse(env.get('SOURCE_ALLOWLIST')?.value);
    };
    expect(sourceSettings()).toEqual({});
    expect(
      sourceSettings(
        '--set-json',
        'sources.allowlist={"acme":[{"bucket":"acme-handbook","prefix":"public/"}]}',
      ),
    ).toEqual({ acme: [{ bucket: 'acme-handbook', prefix: 'public/' }] });
    const bad = templateFails(
      ...DEV,
      '--set-json',
      'sources.allowlist={"acme":[{"bucket":"Not_A_Bucket"}]}',
    );
    expect(bad.status).not.toBe(0);
  });

  it('routes /v1/webhooks to webhook-service, which refuses private receivers by default', () => {
    const { objects } = render('-f', PRODUCTION);
    const rules = find(objects, 'Ingress', 'knowledge-base').spec?.['rules'] as Array<{
      http: {
        paths: Array<{ path: string; backend: { service: { name: string } } }>;
      };
    }>;
    const webhooks = rules[0]!.http.paths.find((p) => p.path === '/v1/webhooks');
    expect(webhooks?.backend.service.name).toBe('kb-knowledge-base-webhook-service');
    const env = resolveEnv(
      objects,
      podSpec(find(objects, 'Deployment', 'webhook-service')).containers[0]!,
    );
    expect(env.get('WEBHOOK_ALLOW_PRIVATE_URLS')?.value).toBe('false');
    expect(env.get('WEBHOOK_MAX_ATTEMPTS')?.value).toBe('8');
    expect(env.get('MIGRATE_ON_START')?.value).toBe('false');
    expect(env.get('ACL_GRPC_ADDRESS')?.value).toBe('kb-knowledge-base-acl-service:50051');
  });

  it('opens the public APIs (HTTP; gRPC on query-service only) to callers, and the HTTP port to Prometheus', () => {
    const policies = render('-f', PRODUCTION).objects.filter((o) => o.kind === 'NetworkPolicy');
    const byName = new Map(policies.map((p) => [p.metadata.name, p.spec]));
    expect([...byName.keys()].sort()).toEqual([
      'kb-knowledge-base',
      'kb-knowledge-base-metrics',
      'kb-knowledge-base-parser-service-egress',
      'kb-knowledge-base-public',
      'kb-knowledge-base-public-grpc',
      'kb-knowledge-base-webhook-service-egress',
    ]);
    const callers = [
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } },
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agents' } } },
    ];
    expect(byName.get('kb-knowledge-base-public')).toEqual({
      podSelector: {
        matchExpressions: [
          { key: 'app.kubernetes.io/instance', operator: 'In', values: ['kb'] },
          {
            key: 'app.kubernetes.io/component',
            operator: 'In',
            values: [
              'document-service',
              'query-service',
              'embedding-service',
              'acl-service',
              'webhook-service',
            ],
          },
        ],
      },
      policyTypes: ['Ingress'],
      ingress: [{ from: callers, ports: [{ port: 3000, protocol: 'TCP' }] }],
    });
    expect(byName.get('kb-knowledge-base-public-grpc')).toEqual({
      podSelector: {
        matchLabels: {
          'app.kubernetes.io/instance': 'kb',
          'app.kubernetes.io/component': 'query-service',
        },
      },
      policyTypes: ['Ingress'],
      ingress: [{ from: callers, ports: [{ port: 50051, protocol: 'TCP' }] }],
    });
  });

  it('connects to Kafka with TLS and SCRAM, and to Redis with TLS and AUTH, secrets by reference', () => {
    const { objects } = render('-f', PRODUCTION);
    for (const service of SERVICES) {
      const spec = podSpec(find(objects, 'Deployment', service));
      const env = resolveEnv(objects, spec.containers[0]!);
      expect({ service, ssl: env.get('KAFKA_SSL')?.value }).toEqual({ service, ssl: 'true' });
      expect(env.get('KAFKA_SSL_CA_FILE')?.value).toBe('/etc/kb/kafka-tls/ca.crt');
      expect(env.get('KAFKA_SASL_MECHANISM')?.value).toBe('scram-sha-512');
      expect(env.get('KAFKA_SASL_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({
        name: 'kb-kafka',
        key: 'password',
      });
      expect(spec.volumes).toEqual(
        expect.arrayContaining([{ name: 'kafka-tls', secret: { secretName: 'kb-kafka-tls' } }]),
      );
      // indexing-service removes a deleted document's cached results (ADR 19), with the same AUTH.
      const redis = [
        'document-service',
        'query-service',
        'acl-service',
        'indexing-service',
        'webhook-service',
        // POST /v1/embeddings' `model` budget (review N5).
        'embedding-service',
      ].includes(service);
      expect({ service, url: env.get('REDIS_URL')?.value }).toEqual({
        service,
        url: redis ? 'rediss://redis-master.cache:6380' : undefined,
      });
      if (redis) {
        expect(env.get('REDIS_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({
          name: 'kb-redis',
          key: 'password',
        });
        expect(env.get('REDIS_TLS_CA_FILE')?.value).toBe('/etc/kb/redis-tls/ca.crt');
        expect(env.get('RATE_LIMIT_SEARCH_PER_PRINCIPAL')?.value).toBe('600');
        expect(env.get('RATE_LIMIT_MODEL_PER_PRINCIPAL')?.value).toBe('120');
        // document-service's read budget (review N6, ADR 32).
        expect(env.get('RATE_LIMIT_READ_PER_PRINCIPAL')?.value).toBe('1200');
        expect(env.get('RATE_LIMIT_READ_PER_TENANT')?.value).toBe('12000');
      }
      if (service === 'embedding-service') {
        // POST /v1/embeddings asks acl-service for its permission and queues apart (review N5).
        expect(env.get('ACL_GRPC_ADDRESS')?.value).toMatch(/-acl-service:/);
        expect(env.get('MODEL_API_CONCURRENCY')?.value).toBe('1');
        expect(env.get('MODEL_API_MAX_QUEUE')?.value).toBe('16');
      }
    }
    // No credential is inlined in a ConfigMap.
    const configMaps = JSON.stringify(objects.filter((o) => o.kind === 'ConfigMap'));
    expect(configMaps).not.toMatch(/PASSWORD/);
  });

  it('verifies tokens with a public key alone when given one, with no HS256 secret', () => {
    const pem =
      '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n';
    const { objects } = render(
      ...DEV,
      '--set-string',
      `auth.publicKey=${pem}`,
      '--set',
      'auth.existingSecret=',
    );
    for (const service of ['document-service', 'query-service', 'acl-service']) {
      const env = resolveEnv(objects, podSpec(find(objects, 'Deployment', service)).containers[0]!);
      expect(env.get('AUTH_PUBLIC_KEY')?.value).toBe(pem);
      expect(env.has('AUTH_JWT_SECRET')).toBe(false);
    }
  });

  it('renders no chart Secret when every credential comes from an existing Secret', () => {
    expect(render('-f', PRODUCTION).objects.filter((o) => o.kind === 'Secret')).toEqual([]);
  });
});

describe('validation', () => {
  it("passes query-service's in-memory BM25 limits through as numbers or auto (ADR 55)", () => {
    const limitsOf = (rendered: Rendered) => {
      const container = podSpec(find(rendered.objects, 'Deployment', 'query-service'))
        .containers[0]!;
      const env = resolveEnv(rendered.objects, container);
      const { LEXICAL_MEMORY_CHUNKS, LEXICAL_MEMORY_POSTINGS } = queryConfigSchema.shape;
      return z.object({ LEXICAL_MEMORY_CHUNKS, LEXICAL_MEMORY_POSTINGS }).parse({
        LEXICAL_MEMORY_CHUNKS: env.get('LEXICAL_MEMORY_CHUNKS')?.value,
        LEXICAL_MEMORY_POSTINGS: env.get('LEXICAL_MEMORY_POSTINGS')?.value,
      });
    };
    expect(limitsOf(render(...DEV))).toEqual({
      LEXICAL_MEMORY_CHUNKS: 250_000,
      LEXICAL_MEMORY_POSTINGS: 4_000_000,
    });
    const auto = render(
      ...DEV,
      ...['--set', 'search.lexicalMemoryChunks=auto', '--set', 'search.lexicalMemoryPostings=auto'],
    );
    expect(limitsOf(auto)).toEqual({
      LEXICAL_MEMORY_CHUNKS: 'auto',
      LEXICAL_MEMORY_POSTINGS: 'auto',
    });
    expect(templateFails(...DEV, '--set', 'search.lexicalMemoryChunks=lots').status).not.toBe(0);
  });

  it('kubeconform really rejects a malformed object (the schemas are loaded, not skipped)', () => {
    const { yaml } = render(...DEV);
    const broken = yaml.replace(
      'terminationGracePeriodSeconds: 30',
      'terminationGracePeriodSeconds: thirty',
    );
    expect(broken).not.toBe(yaml);
    const result = kubeconform(broken);
    expect(result.status).not.toBe(0);
    expect(result.stdout).toMatch(/Invalid: [1-9]/);
  });

  it.each([
    [['--set', 'vectorStore.backend=foo'], /vectorStore\.backend|backend.*must be one of/],
    [['--set', 'vectorStore.backend=pinecone'], /indexHost/],
    [
      [
        '--set',
        'vectorStore.backend=pinecone',
        '--set',
        'vectorStore.pinecone.indexHost=dense.example.com',
      ],
      /sparseIndexHost/,
    ],
    [['--set', 'services.query-service.replicas=0'], /replicas/],
    [['--set', 'image.pullPolicy=Sometimes'], /pullPolicy/],
    [['--set', 'kafak.brokers=x:9092'], /kafak/],
    [['--set', 'embedding.modelVolume.existingClaim='], /image/],
    [['--set', 'auth.existingSecret='], /auth\.jwksUrl/],
    [
      [
        '--set',
        'auth.existingSecret=',
        '--set',
        'auth.jwksUrl=https://login.example.com/jwks.json',
      ],
      /auth\.issuer and auth\.audience/,
    ],
    [['--set', 'auth.maxTokenAgeSeconds=0'], /maxTokenAgeSeconds/],
    [['--set', 'embedding.provider=cohere'], /provider/],
    [['--set', 'embedding.provider=openai'], /url|model/],
    [['--set', 'kafka.sasl.mechanism=scram-sha-256'], /username|existingSecret/],
    [['--set', 'kafka.sasl.mechanism=gssapi'], /mechanism/],
    [['--set', 'rateLimits.search.perPrincipal=-1'], /perPrincipal/],
    [['--set', 'redis.url=http://redis:6379'], /url/],
  ])('values.schema.json rejects %j', (args, message) => {
    const result = templateFails(...DEV, ...args);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(message);
  });

  it('names the missing setting when a required secret value is absent', () => {
    const result = templateFails(...DEV, '--set', 'postgres.url=');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('postgres.url (or postgres.existingSecret) is required');
  });
});

/** The environment of a Deployment's service container. */
const serviceEnv = (objects: K8sObject[], service: string): Map<string, EnvVar> =>
  resolveEnv(objects, podSpec(find(objects, 'Deployment', service)).containers[0]!);

describe('secure by default (review 2026-11-26: M9, L3, N5, N10-N12)', () => {
  describe('Kafka and Redis (M9): TLS and a client identity unless a value says insecure', () => {
    it('refuses to render the default values, naming the setting and the way out', () => {
      const result = templateFails();
      expect(result.status).not.toBe(0);
      expect(result.stderr).toMatch(/kafka: TLS is required \(kafka\.tls\.enabled: true/);
      expect(result.stderr).toContain('kafka.insecure: true');
    });

    it.each([
      [['--set', 'kafka.tls.enabled=false'], /kafka: TLS is required/],
      [['--set', 'kafka.sasl.mechanism='], /kafka: client authentication is required/],
      [
        [
          '--set',
          'kafka.tls.mutual=true',
          '--set',
          'kafka.tls.existingSecret=',
          '--set',
          'kafka.sasl.mechanism=',
        ],
        /kafka: client authentication is required/,
      ],
      [['--set', 'redis.url=redis://redis-master.cache:6379'], /redis: TLS is required/],
      [['--set', 'redis.existingSecret='], /redis: AUTH is required/],
    ])('refuses the production-like values with %j', (args, message) => {
      const result = templateFails('-f', PRODUCTION, ...args);
      expect(result.status).not.toBe(0);
      expect(result.stderr).toMatch(message);
    });

    it('takes a mutual-TLS client certificate in place of SASL, never neither; no Redis needs nothing', () => {
      const anonymous = templateFails('-f', PRODUCTION, '--set', 'kafka.sasl.mechanism=');
      expect(anonymous.status).not.toBe(0);
      const { objects } = render(
        '-f',
        PRODUCTION,
        '--set',
        'kafka.sasl.mechanism=',
        '--set',
        'kafka.tls.mutual=true',
        '--set',
        'redis.url=',
      );
      const env = serviceEnv(objects, 'document-service');
      expect(env.get('KAFKA_SSL_CERT_FILE')?.value).toBe('/etc/kb/kafka-tls/tls.crt');
      expect(env.has('KAFKA_SASL_MECHANISM')).toBe(false);
      expect(env.has('REDIS_URL')).toBe(false);
    });

    it('connects in plaintext, without credentials, only where kafka.insecure and redis.insecure say so', () => {
      const { objects } = render(...DEV);
      const env = serviceEnv(objects, 'query-service');
      expect(env.get('KAFKA_BROKERS')?.value).toBe('kafka:9092');
      expect(env.has('KAFKA_SSL')).toBe(false);
      expect(env.get('REDIS_URL')?.value).toBe('redis://redis:6379');
      expect(env.has('REDIS_PASSWORD')).toBe(false);
      const onlyKafka = templateFails(...DEV, '--set', 'redis.insecure=false');
      expect(onlyKafka.stderr).toMatch(/redis: TLS is required/);
    });
  });

  describe('tokens (L3): HS256 or a JWKS URL / public key, never both', () => {
    it('mounts no HS256 secret in any pod when tokens are verified with a JWKS URL', () => {
      const { objects } = render('-f', PRODUCTION);
      for (const service of SERVICES) {
        const env = serviceEnv(objects, service);
        expect({ service, hs256: env.has('AUTH_JWT_SECRET') }).toEqual({ service, hs256: false });
      }
      for (const service of ['document-service', 'embedding-service', 'webhook-service']) {
        expect(serviceEnv(objects, service).get('AUTH_JWKS_URL')?.value).toBe(
          'https://login.example.com/.well-known/jwks.json',
        );
      }
      // The defaults name no HS256 secret: a JWKS URL alone turns HS256 off.
      const values = parseAllDocuments(
        readFileSync(join(CHART, 'values.yaml'), 'utf8'),
      )[0]!.toJS() as {
        auth: Record<string, unknown>;
      };
      expect(values.auth).toMatchObject({ existingSecret: '', jwtSecret: '' });
      expect(
        render(
          ...DEV,
          '--set',
          'auth.existingSecret=',
          '--set',
          'auth.jwksUrl=https://login.example.com/jwks.json',
          '--set',
          'auth.issuer=https://login.example.com/',
          '--set',
          'auth.audience=knowledge-base',
        ).yaml,
      ).not.toContain('AUTH_JWT_SECRET');
    });

    it.each([
      [
        'a JWKS URL and auth.existingSecret',
        ['-f', PRODUCTION, '--set', 'auth.existingSecret=kb-auth'],
      ],
      [
        'a JWKS URL and auth.jwtSecret',
        ['-f', PRODUCTION, '--set', 'auth.jwtSecret=not-a-real-secret'],
      ],
      [
        'a public key and auth.existingSecret',
        [
          ...DEV,
          '--set-string',
          'auth.publicKey=-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n',
        ],
      ],
    ])('refuses an HS256 secret beside a JWKS URL or a public key: %s', (_label, args) => {
      const result = templateFails(...args);
      expect(result.status).not.toBe(0);
      expect(result.stderr).toMatch(
        /HS256 secret .* cannot be combined with auth\.jwksUrl or auth\.publicKey/,
      );
    });
  });

  describe('ingress routes and the policies that admit them (N5, N12)', () => {
    interface IngressPath {
      path: string;
      pathType: string;
      backend: { service: { name: string; port: { name: string } } };
    }
    interface Peer {
      namespaceSelector?: { matchLabels?: Record<string, string> };
      podSelector?: Selector;
      ipBlock?: { cidr: string; except?: string[] };
    }
    interface Selector {
      matchLabels?: Record<string, string>;
      matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
    }
    interface PolicySpec {
      podSelector: Selector;
      policyTypes: string[];
      ingress?: Array<{
        from?: Peer[];
        ports?: Array<{ port: number | string; protocol?: string }>;
      }>;
      egress?: Array<{ to?: Peer[]; ports?: Array<{ port: number | string; protocol?: string }> }>;
    }
    const selects = (selector: Selector, labels: Record<string, string>): boolean =>
      Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value) &&
      (selector.matchExpressions ?? []).every((e) => {
        if (e.operator !== 'In') throw new Error(`selector operator ${e.operator} not handled`);
        return (e.values ?? []).includes(labels[e.key] ?? '');
      });

    /** Kubernetes' rule: an Exact path, else the longest Prefix matching whole path elements. */
    const routeOf = (paths: IngressPath[], path: string): IngressPath | undefined => {
      const exact = paths.find((p) => p.pathType === 'Exact' && p.path === path);
      if (exact) return exact;
      const elements = (p: string) => p.split('/').filter(Boolean);
      const target = elements(path);
      return paths
        .filter((p) => p.pathType === 'Prefix')
        .filter((p) => elements(p.path).every((element, i) => target[i] === element))
        .sort((a, b) => elements(b.path).length - elements(a.path).length)[0];
    };

    /** Routes two services serve, whose public one is the other service's (ADR 23). */
    const SERVED_ELSEWHERE: Record<string, string> = {
      'embedding-service GET /v1/models': 'query-service',
    };
    /** Published outside OpenAPI: the MCP server (Streamable HTTP, docs/adr/0021). */
    const MCP_ROUTES = ['GET', 'POST', 'DELETE'].map((method) => ({
      service: 'query-service' as ServiceName,
      method,
      path: '/mcp',
    }));

    /**
     * Every public operation each service publishes: the OpenAPI documents the services serve,
     * as libs/api-client/openapi keeps them (`npm run openapi:check` proves them current, ADR 37).
     * Internal routes are not published there, so every operation here must be routed.
     */
    const publishedRoutes = (service: ServiceName) => {
      const file = join(
        ROOT,
        'libs',
        'api-client',
        'openapi',
        `${service.replace(/-service$/, '')}.json`,
      );
      if (!existsSync(file)) return [];
      const document = JSON.parse(readFileSync(file, 'utf8')) as {
        paths: Record<string, Record<string, unknown>>;
      };
      return Object.entries(document.paths).flatMap(([path, operations]) =>
        Object.keys(operations)
          .filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
          .map((method) => ({ service, method: method.toUpperCase(), path })),
      );
    };

    it('routes every operation of every OpenAPI document, and /mcp, to its service, and a policy admits callers to it', () => {
      const { objects } = render('-f', PRODUCTION);
      const rules = find(objects, 'Ingress', 'knowledge-base').spec?.['rules'] as Array<{
        http: { paths: IngressPath[] };
      }>;
      const paths = rules[0]!.http.paths;
      const policies = objects
        .filter((o) => o.kind === 'NetworkPolicy')
        .map((o) => o.spec as unknown as PolicySpec);
      const routes = [...SERVICES.flatMap(publishedRoutes), ...MCP_ROUTES];
      // The scan finds the routes the review named.
      expect(routes.map((r) => `${r.service} ${r.method} ${r.path}`)).toEqual(
        expect.arrayContaining([
          'query-service POST /mcp',
          'document-service POST /v1/sources',
          'document-service GET /v1/stats',
          'embedding-service POST /v1/embeddings',
        ]),
      );
      const checked: string[] = [];
      for (const route of routes) {
        const key = `${route.method} ${route.path}`;
        const service = SERVED_ELSEWHERE[`${route.service} ${key}`] ?? route.service;
        // A concrete URL: path parameters become a value.
        const url = route.path.replace(/\{[^/]+\}/g, 'x');
        const target = routeOf(paths, url);
        expect({ route: key, to: target?.backend.service.name }).toEqual({
          route: key,
          to: `kb-knowledge-base-${service}`,
        });
        expect(target?.backend.service.port).toEqual({ name: 'http' });
        // A policy selecting the service's pods admits the ingress controller on the HTTP port.
        const labels = find(objects, 'Deployment', service).spec?.template?.metadata?.labels ?? {};
        const admitted = policies.some(
          (policy) =>
            selects(policy.podSelector, labels) &&
            (policy.ingress ?? []).some(
              (rule) =>
                (rule.from ?? []).some(
                  (peer) =>
                    peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] ===
                      'ingress-nginx' && !peer.podSelector,
                ) && (rule.ports ?? []).some((port) => port.port === 3000),
            ),
        );
        expect({ route: key, service, admitted }).toEqual({ route: key, service, admitted: true });
        checked.push(key);
      }
      expect(checked.length).toBeGreaterThan(40);
    });

    it('opens only the HTTP port (where /metrics is served) to the scrapers, and only to their pods', () => {
      const { objects } = render('-f', PRODUCTION);
      const metrics = find(objects, 'NetworkPolicy', '-metrics').spec as unknown as PolicySpec;
      expect(metrics).toEqual({
        podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'kb' } },
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: [
              {
                namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
                podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
              },
            ],
            ports: [{ port: 3000, protocol: 'TCP' }],
          },
        ],
      });
      // The ServiceMonitor scrapes that port, and the gRPC port is no scraper's.
      const monitor = find(objects, 'ServiceMonitor', 'knowledge-base');
      expect(monitor.spec?.['endpoints']).toEqual([
        expect.objectContaining({ port: 'http', path: '/metrics' }),
      ]);
    });

    const PRIVATE_IPV4 = [
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      '169.254.0.0/16',
      '100.64.0.0/10',
    ];
    const PRIVATE_IPV6 = ['fc00::/7', 'fe80::/10'];

    it('lets webhook-service reach the public internet but no private range, and its dependencies on their ports', () => {
      const { objects } = render('-f', PRODUCTION);
      const policy = find(objects, 'NetworkPolicy', 'webhook-service-egress')
        .spec as unknown as PolicySpec;
      expect(policy.policyTypes).toEqual(['Egress']);
      expect(policy.podSelector.matchLabels?.['app.kubernetes.io/component']).toBe(
        'webhook-service',
      );
      const rules = policy.egress ?? [];
      // No rule allows every destination.
      for (const rule of rules) expect((rule.to ?? []).length).toBeGreaterThan(0);
      const blocks = rules.flatMap((rule) =>
        (rule.to ?? []).flatMap((peer) => (peer.ipBlock ? [{ ...peer.ipBlock, rule }] : [])),
      );
      const ipv4 = blocks.find((b) => b.cidr === '0.0.0.0/0');
      const ipv6 = blocks.find((b) => b.cidr === '::/0');
      expect(ipv4?.except).toEqual(expect.arrayContaining(PRIVATE_IPV4));
      expect(ipv6?.except).toEqual(expect.arrayContaining(PRIVATE_IPV6));
      // Any other address block (a managed Postgres) is open on its ports only.
      const others = blocks.filter((b) => b !== ipv4 && b !== ipv6);
      expect(others.map((b) => b.cidr)).toEqual(['10.20.0.0/24']);
      for (const block of others) {
        expect({ cidr: block.cidr, ports: block.rule.ports }).toEqual({
          cidr: block.cidr,
          ports: [{ port: 5432, protocol: 'TCP' }],
        });
      }
      expect(JSON.stringify(rules)).toContain('"port":5432');
      expect(JSON.stringify(rules)).toContain('"port":53');
    });

    it('keeps parser-service to DNS, Kafka, S3 and the collector: no internet, no Postgres', () => {
      const { objects } = render('-f', PRODUCTION);
      const policy = find(objects, 'NetworkPolicy', 'parser-service-egress')
        .spec as unknown as PolicySpec;
      const rules = policy.egress ?? [];
      for (const rule of rules) {
        expect((rule.to ?? []).length).toBeGreaterThan(0);
        expect((rule.ports ?? []).length).toBeGreaterThan(0);
      }
      expect(rules.flatMap((r) => r.ports ?? []).map((p) => p.port)).toEqual([
        53, 53, 9093, 443, 4318,
      ]);
    });

    it('refuses an egress policy that does not say where a dependency is', () => {
      const result = templateFails(
        '-f',
        PRODUCTION,
        '--set-json',
        'networkPolicy.egress.kafka.to=[]',
      );
      expect(result.status).not.toBe(0);
      expect(result.stderr).toMatch(/networkPolicy\.egress\.kafka\.to is required/);
    });
  });

  describe('database roles and the webhook key (N11)', () => {
    it("gives each service, and its migration, the DATABASE_URL of its own role's Secret", () => {
      const { objects } = render('-f', PRODUCTION);
      const job = podSpec(find(objects, 'Job', '-migrate'));
      const migrations = new Map(allContainers(job).map((c) => [c.name, c]));
      for (const [service, role] of Object.entries(DATABASE_ROLES)) {
        const ref = serviceEnv(objects, service).get('DATABASE_URL')?.valueFrom?.secretKeyRef;
        expect({ service, ref }).toEqual({ service, ref: { name: `kb-db-${role}`, key: 'url' } });
        const migration = migrations.get(service.replace(/-service$/, ''));
        if (migration) {
          expect(
            resolveEnv(objects, migration).get('DATABASE_URL')?.valueFrom?.secretKeyRef,
          ).toEqual({ name: `kb-db-${role}`, key: 'url' });
        }
      }
      expect(migrations.size).toBe(SCHEMA_SERVICES.length);
      // No shared URL anywhere.
      expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    });

    it('refuses a service without its own role unless postgres.sharedRole says so', () => {
      const result = templateFails(...DEV, '--set', 'postgres.sharedRole=false');
      expect(result.status).not.toBe(0);
      expect(result.stderr).toMatch(
        /postgres\.perService\.[a-z-]+-service\.existingSecret is required/,
      );
      const shared = serviceEnv(render(...DEV).objects, 'acl-service').get('DATABASE_URL');
      expect(shared?.valueFrom?.secretKeyRef).toEqual({
        name: 'kb-knowledge-base-secrets',
        key: 'database-url',
      });
    });

    it('gives WEBHOOK_SECRET_KEY to webhook-service alone, from its Secret, and requires it', () => {
      const { objects, yaml } = render('-f', PRODUCTION);
      expect(serviceEnv(objects, 'webhook-service').get('WEBHOOK_SECRET_KEY')?.valueFrom).toEqual({
        secretKeyRef: { name: 'kb-webhook-secret-key', key: 'secret-key' },
      });
      expect(yaml.match(/kb-webhook-secret-key/g)).toHaveLength(1);
      const result = templateFails('-f', PRODUCTION, '--set', 'webhooks.secretKey.existingSecret=');
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain('webhooks.secretKey.existingSecret is required');
    });
  });
});
