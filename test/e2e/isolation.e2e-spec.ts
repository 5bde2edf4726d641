/**
 * Isolation as a generated test (issue 34, docs/adr/0019): every operation the services publish
 * is tried with tenant A's ids by three callers who must get none of A's data:
 *
 * - every operation of every service's `/openapi.json` (each service is asked; those answering
 *   one are the publishers);
 * - every MCP tool and resource query-service's `/mcp` lists (`tools/list`, `resources/list`,
 *   `resources/templates/list`);
 * - every gRPC method of the `kb.v1` services in libs/contracts/proto (loaded with
 *   @grpc/proto-loader, so a new method appears here by itself).
 *
 * Tenant A's admin makes one of every resource: an indexed document with a marker word (its ACL
 * names nobody but its owner), a knowledge base, an S3 source and one sync of it, a webhook, a
 * role with permissions, a role assignment and a group membership. The callers are tenant B's
 * admin, a member of A with no role, and a caller with no token. Each answer must be a refusal
 * (401, 403, 404; UNAUTHENTICATED, PERMISSION_DENIED, NOT_FOUND; an MCP tool error or JSON-RPC
 * error), or a success only where the case says the operation answers from the caller's own
 * tenant (listings, searches, creating in one's own tenant), and no answer may hold a value of A
 * that the caller did not send itself. A's admin runs every read with the same ids first: a case
 * whose ids find nothing would prove nothing.
 *
 * The cases are keyed by what is published; the suite fails when an operation is published that
 * has no case here, or a case names one no longer published.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import {
  Client as GrpcClient,
  credentials,
  Metadata,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { loadSync, type MethodDefinition } from '@grpc/proto-loader';
import { S3BlobStore } from '@kb/storage';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import {
  FAKE_CROSS_ENCODER,
  installFakeCrossEncoder,
} from '../../apps/query-service/test/support/fake-cross-encoder';
import { testToken, useSuite } from '../support/suite';
import { waitFor } from '../support/wait';
import { WebhookReceiver } from '../support/webhook-receiver';

jest.setTimeout(600_000);

const PROTO_ROOT = resolve(__dirname, '../../libs/contracts/proto');
/** Probes in flight at once: enough to be quick, few enough for a 2-core machine. */
const CONCURRENCY = 8;

// ---------------------------------------------------------------------------------------------
// Tenant A's values: every one unique, so finding it in an answer means it came from A.

/** Random lower-case letters (a marker word must stay one token for the lexical index). */
const letters = (n: number) =>
  [...randomBytes(n)].map((b) => String.fromCharCode(97 + (b % 26))).join('');
const hex = () => randomBytes(5).toString('hex');

/** Known before the services start: the source bucket goes into SOURCE_ALLOWLIST. */
const BUCKET = `iso-src-${hex()}`;

interface AValues {
  tenant: string;
  owner: string;
  member: string;
  kbId: string;
  kbName: string;
  kbDescription: string;
  bucket: string;
  prefix: string;
  sourceName: string;
  sourceId: string;
  syncId: string;
  marker: string;
  secretWord: string;
  title: string;
  filename: string;
  externalId: string;
  tag: string;
  metaValue: string;
  documentId: string;
  sha256: string;
  hookPath: string;
  hookUrl: string;
  hookDescription: string;
  hookId: string;
  hookSecret: string;
  role: string;
  group: string;
  grantee: string;
  holdId: string;
  holdName: string;
  erasureId: string;
}

/**
 * What a member of A reads by design (ADR 26: knowledge bases and sources are listed to every
 * member, whatever they may read in them); everything else of A is private to its owner, its
 * admins and, for webhooks and the policy, tenant admins.
 */
const TENANT_LEVEL: ReadonlyArray<keyof AValues> = [
  'tenant',
  'owner',
  'member',
  'kbId',
  'kbName',
  'kbDescription',
  'bucket',
  'prefix',
  'sourceName',
  'sourceId',
  'syncId',
];

// ---------------------------------------------------------------------------------------------
// The cases.

type Who = 'tenantB' | 'member' | 'anonymous';
const CALLERS: Who[] = ['tenantB', 'member', 'anonymous'];
/** A success is no leak: the operation answers from the caller's own tenant. */
const OWN: Who[] = ['tenantB', 'member'];
/** Only A's member may succeed: what every member of A reads by design (TENANT_LEVEL). */
const MEMBER: Who[] = ['member'];
/** Only B's admin may succeed: an admin's operation acting in their own tenant. */
const B_ADMIN: Who[] = ['tenantB'];

/**
 * 0: the audit log, before any probe leaves a record of its own; 1: reads (A's admin runs them
 * too, as the control); 2: writes; 3: deletes; 4: creating, in one's own tenant, what bears A's
 * id (after the deletes, which would otherwise find it).
 */
type Phase = 0 | 1 | 2 | 3 | 4;

interface Probe {
  /** Told apart in the output when a case has several. */
  label?: string;
  phase?: Phase;
  /** Callers who may succeed (without A's values). */
  ok?: Who[];
  /** A's admin must find A's data with it (the case's ids are right). */
  reveals?: boolean;
  /**
   * Error codes that are the API's answer for an id the caller's tenant does not hold (e.g. a
   * knowledge base named in a body is 400 `unknown_knowledge_base`): refusals like a 404.
   */
  absent?: string[];
}

interface RestProbe extends Probe {
  params?: Record<string, string>;
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** A multipart body: a file and text parts. */
  file?: { name: string; type: string; content: string };
}

interface McpProbe extends Probe {
  /** tools/call arguments, or for a resource, the URI read. */
  args?: Record<string, unknown>;
  uri?: string;
  /** JSON-RPC method other than the default (tools/call, resources/read). */
  method?: string;
}

interface GrpcProbe extends Probe {
  request: Record<string, unknown>;
}

const json = (value: unknown) => JSON.stringify(value);
/** A google.protobuf.Struct of string values, as proto-loader encodes one. */
const struct = (values: Record<string, string>) => ({
  fields: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { stringValue: v }])),
});
const embeddingModel = process.env['EMBEDDING_MODEL'] ?? 'all-MiniLM-L6-v2';

/** REST operations, by `<service> <operationId>`: how to call each with A's ids. */
const REST_CASES: Record<string, (a: AValues) => RestProbe[]> = {
  // document-service: documents
  'document-service uploadDocument': (a) => [
    {
      body: {
        markdown: '# probe\n\nA probe.',
        title: 'probe',
        knowledgeBaseIds: [a.kbId],
        externalId: a.externalId,
      },
      absent: ['unknown_knowledge_base'],
    },
    // A's external id in the caller's own tenant: a new document there, never A's next version.
    {
      label: "A's externalId",
      body: { markdown: '# probe\n\nA probe.', title: 'probe', externalId: a.externalId },
      ok: B_ADMIN,
    },
  ],
  'document-service listDocuments': (a) => [
    { query: { where: json({ document_id: a.documentId }) }, ok: OWN, reveals: true },
    { label: 'tags', query: { where: json({ tags: a.tag }) }, ok: OWN, reveals: true },
    {
      label: 'externalIdPrefix',
      query: { externalIdPrefix: a.externalId },
      ok: OWN,
      reveals: true,
    },
  ],
  'document-service getDocument': (a) => [{ params: { id: a.documentId }, reveals: true }],
  'document-service editDocument': (a) => [
    { params: { id: a.documentId }, body: { tags: ['probe'] } },
  ],
  'document-service deleteDocument': (a) => [{ params: { id: a.documentId } }],
  'document-service replaceContent': (a) => [
    {
      params: { id: a.documentId },
      file: { name: 'probe.md', type: 'text/markdown', content: '# probe\n\nReplaced.' },
    },
  ],
  'document-service setAcl': (a) => [
    { params: { id: a.documentId }, body: { users: [a.member], tenant: true } },
  ],
  'document-service getDocumentContent': (a) => [{ params: { id: a.documentId }, reveals: true }],
  'document-service getDocumentText': (a) => [{ params: { id: a.documentId }, reveals: true }],
  'document-service getStats': () => [{ ok: OWN, reveals: true }],
  // document-service: knowledge bases
  'document-service createKnowledgeBase': (a) => [
    { phase: 4, body: { id: a.kbId, name: 'probe' }, ok: B_ADMIN },
  ],
  'document-service listKnowledgeBases': (a) => [
    { query: { name: a.kbId }, ok: OWN, reveals: true },
  ],
  'document-service getKnowledgeBase': (a) => [
    { params: { id: a.kbId }, ok: MEMBER, reveals: true },
  ],
  'document-service getKnowledgeBaseStats': (a) => [{ params: { id: a.kbId }, ok: MEMBER }],
  'document-service getKnowledgeBaseMetadataValues': (a) => [
    { params: { id: a.kbId }, query: { field: 'tags' }, ok: MEMBER, reveals: true },
    {
      label: 'metadata',
      params: { id: a.kbId },
      query: { field: 'metadata.project' },
      ok: MEMBER,
      reveals: true,
    },
  ],
  'document-service listKnowledgeBaseDocuments': (a) => [
    { params: { id: a.kbId }, ok: MEMBER, reveals: true },
  ],
  'document-service updateKnowledgeBase': (a) => [
    { params: { id: a.kbId }, body: { description: 'probe' } },
  ],
  'document-service emptyKnowledgeBase': (a) => [{ params: { id: a.kbId } }],
  'document-service deleteKnowledgeBase': (a) => [
    { params: { id: a.kbId }, query: { cascade: 'true' } },
  ],
  'document-service uploadPrecomputedChunks': (a) => [
    {
      params: { id: a.kbId },
      body: { title: 'probe', externalId: a.externalId, chunks: [{ text: 'A probe.' }] },
    },
  ],
  // document-service: repair after a restore (ADR 40) acts on the caller's own tenant: B's admin
  // repairs B; A's member (no admin role) is refused. The answer holds counts only.
  'document-service repairDocuments': () => [{ phase: 2, ok: B_ADMIN }],
  // document-service: legal holds (ADR 52), tenant admins of the caller's own tenant only. B's
  // admin may place one in B (naming A's document id, which B does not hold); A's member may not.
  'document-service placeHold': (a) => [
    { body: { name: 'probe', documentIds: [a.documentId] }, ok: B_ADMIN },
    { label: "A's knowledge base", body: { name: 'probe', knowledgeBaseId: a.kbId } },
  ],
  'document-service listHolds': () => [{ query: { state: 'all' }, ok: B_ADMIN, reveals: true }],
  'document-service getHold': (a) => [{ params: { id: a.holdId }, reveals: true }],
  'document-service releaseHold': (a) => [{ params: { id: a.holdId }, body: { reason: 'probe' } }],
  'document-service previewRetention': (a) => [{ params: { id: a.kbId } }],
  // Erasures (ADR 52): B's admin erases in B (what A's owner id uploaded there: nothing).
  'document-service requestErasure': (a) => [{ body: { uploadedBy: a.owner }, ok: B_ADMIN }],
  'document-service getErasure': (a) => [{ params: { id: a.erasureId }, reveals: true }],
  // document-service: usage and quotas (ADR 53) answer for the caller's own tenant: usage to its
  // admins only (it names A's knowledge bases), the limits to any member; setting a limit on A's
  // knowledge base is refused to all.
  'document-service getUsage': () => [{ ok: B_ADMIN, reveals: true }],
  'document-service getQuotas': () => [{ ok: OWN }],
  'document-service setQuotas': (a) => [
    { phase: 2, body: { knowledgeBaseId: a.kbId, maxDocuments: 1_000_000 } },
  ],
  // document-service: sources
  'document-service createSource': (a) => [
    {
      body: {
        name: 'probe',
        knowledgeBaseId: a.kbId,
        kind: 's3',
        bucket: a.bucket,
        prefix: a.prefix,
      },
    },
    // Review N1: A's bucket, from a knowledge base of the caller's own.
    {
      label: "A's bucket, own knowledge base",
      body: { name: 'probe', knowledgeBaseId: 'default', kind: 's3', bucket: a.bucket, prefix: '' },
    },
  ],
  'document-service listSources': () => [{ ok: OWN, reveals: true }],
  'document-service getSource': (a) => [{ params: { id: a.sourceId }, ok: MEMBER, reveals: true }],
  'document-service deleteSource': (a) => [{ params: { id: a.sourceId } }],
  'document-service syncSource': (a) => [{ params: { id: a.sourceId }, query: { wait: 'true' } }],
  'document-service getSourceSync': (a) => [
    { params: { id: a.sourceId, syncId: a.syncId }, ok: MEMBER },
  ],
  // `kb sync --source` opens and reports its folder syncs (ADR 43): write on A's own source.
  'document-service openSourceSync': (a) => [{ params: { id: a.sourceId } }],
  'document-service finishSourceSync': (a) => [
    {
      params: { id: a.sourceId, syncId: a.syncId },
      body: { counts: { added: 0, updated: 0, unchanged: 0, deleted: 0, failed: 0 } },
    },
  ],
  'document-service listSourceSyncs': (a) => [
    { params: { id: a.sourceId }, ok: MEMBER, reveals: true },
  ],
  // query-service
  'query-service search': (a) => [
    { phase: 1, body: { query: a.marker, topK: 10 }, ok: OWN, reveals: true },
    {
      label: 'knowledge base and filter',
      phase: 1,
      body: {
        query: a.marker,
        topK: 10,
        knowledgeBaseIds: [a.kbId],
        filter: { document_id: a.documentId },
      },
      ok: OWN,
      reveals: true,
    },
  ],
  'query-service searchGet': (a) => [
    { query: { q: a.marker, kb: a.kbId }, ok: OWN, reveals: true },
  ],
  'query-service searchSimilar': (a) => [
    { phase: 1, body: { documentId: a.documentId } },
    { label: 'text', phase: 1, body: { text: a.marker }, ok: OWN, reveals: true },
  ],
  'query-service retrieveContext': (a) => [
    { phase: 1, body: { question: a.marker, knowledgeBaseIds: [a.kbId] }, ok: OWN, reveals: true },
  ],
  // Pure functions of the request (no tenant data): any caller with a token may use them.
  'query-service rerank': (a) => [
    { phase: 1, body: { query: a.marker, documents: ['A probe passage.'] }, ok: OWN },
  ],
  'query-service listModels': () => [{ ok: OWN }],
  'query-service searchTool': () => [{ ok: OWN }],
  'embedding-service createEmbedding': (a) => [
    { phase: 1, body: { input: a.marker, model: embeddingModel }, ok: OWN },
  ],
  'embedding-service listModels': () => [{ ok: OWN }],
  'embedding-service retrieveModel': () => [{ params: { model: embeddingModel }, ok: OWN }],
  // acl-service: tenant admins only; B's admin administers B.
  'acl-service describePolicy': () => [{ ok: B_ADMIN, reveals: true }],
  'acl-service assignRole': (a) => [
    { body: { member: `u:${a.grantee}`, role: a.role }, ok: B_ADMIN },
  ],
  'acl-service unassignRole': (a) => [
    { body: { member: `u:${a.grantee}`, role: a.role }, ok: B_ADMIN },
  ],
  'acl-service addGroupMember': (a) => [
    { params: { group: a.group }, body: { user: a.grantee }, ok: B_ADMIN },
  ],
  'acl-service removeGroupMember': (a) => [
    { params: { group: a.group, user: a.grantee }, ok: B_ADMIN },
  ],
  'acl-service setRolePermissions': (a) => [
    {
      params: { role: a.role },
      body: { permissions: [{ resource: '*', action: '*' }] },
      ok: B_ADMIN,
    },
  ],
  'acl-service queryAudit': (a) => [
    { phase: 0, query: { document: a.documentId }, ok: B_ADMIN },
    { label: 'user', phase: 0, query: { user: a.owner }, ok: B_ADMIN, reveals: true },
    { label: 'all', phase: 0, ok: B_ADMIN, reveals: true },
  ],
  // webhook-service: tenant admins only; B's admin manages B's.
  'webhook-service createWebhook': (a) => [
    { body: { url: a.hookUrl, events: ['document.indexed'] }, ok: B_ADMIN },
  ],
  'webhook-service listWebhooks': () => [{ ok: B_ADMIN, reveals: true }],
  'webhook-service getWebhook': (a) => [{ params: { id: a.hookId }, reveals: true }],
  'webhook-service updateWebhook': (a) => [
    { params: { id: a.hookId }, body: { description: 'probe' } },
  ],
  'webhook-service deleteWebhook': (a) => [{ params: { id: a.hookId } }],
  'webhook-service listWebhookDeliveries': (a) => [{ params: { id: a.hookId } }],
  'webhook-service rotateWebhookSecret': (a) => [
    { params: { id: a.hookId }, body: { graceSeconds: 0 } },
  ],
  'webhook-service testWebhook': (a) => [{ params: { id: a.hookId } }],
};

/** MCP tools by name, and resources by URI or URI template: how to call each with A's ids. */
const MCP_CASES: Record<string, (a: AValues) => McpProbe[]> = {
  'tool kb_search': (a) => [
    { args: { query: a.marker }, ok: OWN, reveals: true },
    {
      label: 'knowledge base and filter',
      args: {
        query: a.marker,
        knowledge_base_ids: [a.kbId],
        filter: { document_id: a.documentId },
      },
      ok: OWN,
      reveals: true,
    },
  ],
  'tool kb_context': (a) => [
    { args: { question: a.marker, knowledge_base_ids: [a.kbId] }, ok: OWN, reveals: true },
  ],
  'tool kb_get_document': (a) => [{ args: { document_id: a.documentId }, reveals: true }],
  'tool kb_list_documents': (a) => [
    { args: { knowledge_base_id: a.kbId }, ok: OWN, reveals: true },
    { label: 'all', args: {}, ok: OWN, reveals: true },
  ],
  'tool kb_list_knowledge_bases': () => [{ args: {}, ok: OWN, reveals: true }],
  'tool kb_stats': () => [{ args: {}, ok: OWN, reveals: true }],
  // Sources over MCP (ADR 43): as createSource, syncSource and getSourceSync over REST.
  'tool kb_add_source': (a) => [
    { args: { name: 'probe', knowledge_base_id: a.kbId, bucket: a.bucket, prefix: a.prefix } },
    {
      label: "A's bucket, own knowledge base",
      args: { name: 'probe', knowledge_base_id: 'default', bucket: a.bucket, prefix: '' },
    },
  ],
  'tool kb_sync': (a) => [
    { label: 'progress', args: { source_id: a.sourceId, sync_id: a.syncId }, ok: MEMBER },
    { args: { source_id: a.sourceId } },
  ],
  'resource kb://knowledge-bases': () => [{ uri: 'kb://knowledge-bases', ok: OWN, reveals: true }],
  'resource-template kb://documents/{id}': (a) => [
    { uri: `kb://documents/${a.documentId}`, reveals: true },
    // The template's list: the documents the caller may read.
    { label: 'list', method: 'resources/list', ok: OWN, reveals: true },
  ],
};

/** gRPC methods by `<package>.<Service>/<Method>`: how to call each with A's ids. */
const GRPC_CASES: Record<string, (a: AValues) => GrpcProbe[]> = {
  'kb.v1.KnowledgeBase/Search': (a) => [
    { request: { query: a.marker, top_k: 10 }, ok: OWN, reveals: true },
    {
      label: 'knowledge base and filter',
      request: {
        query: a.marker,
        top_k: 10,
        knowledge_base_ids: [a.kbId],
        filter: struct({ document_id: a.documentId }),
      },
      ok: OWN,
      reveals: true,
    },
  ],
  'kb.v1.KnowledgeBase/SearchSimilar': (a) => [{ request: { document_id: a.documentId } }],
  'kb.v1.KnowledgeBase/RetrieveContext': (a) => [
    { request: { question: a.marker, knowledge_base_ids: [a.kbId] }, ok: OWN, reveals: true },
  ],
  'kb.v1.KnowledgeBase/GetDocument': (a) => [
    { request: { document_id: a.documentId, include_text: true }, reveals: true },
  ],
  'kb.v1.KnowledgeBase/GetDocumentContent': (a) => [
    { request: { document_id: a.documentId }, reveals: true },
  ],
  'kb.v1.KnowledgeBase/ListDocuments': (a) => [
    {
      request: { knowledge_base_id: a.kbId, filter_json: json({ document_id: a.documentId }) },
      ok: OWN,
      reveals: true,
    },
  ],
  // The caller's own permissions and principals (its tenant is its token's): nothing of A's.
  'kb.v1.AccessControl/Check': () => [{ request: { action: 'admin', resource: 'acl' }, ok: OWN }],
  'kb.v1.AccessControl/BatchCheck': () => [
    {
      request: {
        checks: [
          { action: 'read', resource: 'documents' },
          { action: 'read', resource: 'audit' },
        ],
      },
      ok: OWN,
    },
  ],
  'kb.v1.AccessControl/ExpandPrincipals': () => [{ request: {}, ok: OWN }],
};

/** Where each gRPC service of the protos is served. */
const GRPC_SERVERS: Record<string, string> = {
  'kb.v1.KnowledgeBase': 'query-service',
  'kb.v1.AccessControl': 'acl-service',
};

// ---------------------------------------------------------------------------------------------
// Running the probes.

/** One answer, whatever the surface. */
interface Outcome {
  /** `200`, `404`, `NOT_FOUND`, `tool-error`, … */
  code: string;
  refused: boolean;
  succeeded: boolean;
  throttled: boolean;
  /** A tool error or a 5xx that says nothing: a failure, not a refusal. */
  internal?: boolean;
  /** The API's error code, when the answer has one. */
  errorCode?: string;
  /** The answer's JSON (MCP: the tool's text parsed), for the count check. */
  value?: unknown;
  text: string;
}

interface Result {
  key: string;
  label: string;
  caller: Who | 'owner';
  code: string;
  problem?: string;
  /** The start of the answer (KB_ISOLATION_VERBOSE=1 prints them). */
  answer: string;
}

type Surface = 'REST' | 'MCP' | 'gRPC';
interface Published {
  surface: Surface;
  key: string;
  /** REST: the service, method, path and whether it needs no token. */
  service?: string;
  method?: string;
  path?: string;
  public?: boolean;
  /** gRPC: the method's definition. */
  definition?: MethodDefinition<object, object>;
  /** gRPC: the server's address. */
  address?: string;
}

async function pool<T>(tasks: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const results: T[] = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/** A gRPC answer as text: bytes as UTF-8, so a document's content shows as itself. */
function grpcText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && (v as { type?: unknown }).type === 'Buffer') {
      return Buffer.from((v as { data: number[] }).data).toString('utf8');
    }
    return v;
  });
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

/** Fields that count documents, chunks or their bytes (REST, MCP and gRPC spellings). */
const COUNT_FIELDS = new Set([
  'documentCount',
  'chunkCount',
  'chunk_count',
  'bytes',
  'documents',
  'chunks',
]);
/** Objects of counts by status. */
const COUNTS_BY = new Set(['documentsByStatus', 'byStatus']);

/** The non-zero counts in an answer (`totals.documents=1`, …); a search's `total` too. */
function countsIn(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => countsIn(v, `${path}[${i}]`));
  if (!value || typeof value !== 'object') return [];
  const found: string[] = [];
  const record = value as Record<string, unknown>;
  for (const [key, v] of Object.entries(record)) {
    const at = path ? `${path}.${key}` : key;
    const isCount =
      COUNT_FIELDS.has(key) ||
      COUNTS_BY.has(path.split('.').pop() ?? '') ||
      (key === 'total' && 'hits' in record);
    if (typeof v === 'number' && isCount && v !== 0) found.push(`${at}=${v}`);
    else if (typeof v === 'string' && isCount && /^[1-9]\d*$/.test(v)) found.push(`${at}=${v}`);
    else found.push(...countsIn(v, at));
  }
  return found;
}

const excerpt = (text: string) => (text.length > 400 ? `${text.slice(0, 400)}…` : text);

describe('isolation: every published operation, tried with tenant A’s ids', () => {
  const modelDir = mkdtempSync(join(tmpdir(), 'kb-e2e-isolation-reranker-'));
  installFakeCrossEncoder(modelDir);
  const suite = useSuite('isolation', 6800, (tenant) => ({
    // Probes must never be throttled: a 429 fails the case as a broken setup (0: no limit).
    ...Object.fromEntries(
      ['SEARCH', 'UPLOAD', 'ADMIN', 'READ', 'MODEL'].flatMap((budget) =>
        ['PRINCIPAL', 'TENANT'].map((per) => [`RATE_LIMIT_${budget}_PER_${per}`, '0']),
      ),
    ),
    MODEL_API_MAX_QUEUE: String(4 * CONCURRENCY),
    // /v1/rerank answers from a (fake) cross-encoder rather than 503.
    RERANKER_MODEL: FAKE_CROSS_ENCODER,
    RERANKER_MODEL_DIR: modelDir,
    // The operator grants tenant A its source bucket, and nobody else anything.
    SOURCE_ALLOWLIST: JSON.stringify({ [tenant]: [{ bucket: BUCKET, prefix: '' }] }),
  }));
  const receiver = new WebhookReceiver();
  const bucketStore = new S3BlobStore({
    endpoint: suite.env['S3_ENDPOINT'],
    region: suite.env['S3_REGION'] ?? 'us-east-1',
    bucket: BUCKET,
    accessKeyId: suite.env['S3_ACCESS_KEY_ID'],
    secretAccessKey: suite.env['S3_SECRET_ACCESS_KEY'],
  });

  const a: AValues = {
    tenant: suite.tenant,
    owner: `iso-owner-${hex()}`,
    member: `iso-member-${hex()}`,
    kbId: `iso-kb-${hex()}`,
    kbName: `Isolation KB ${hex()}`,
    kbDescription: `kb-description-${hex()}`,
    bucket: BUCKET,
    prefix: `iso-prefix-${hex()}/`,
    sourceName: `iso-source-${hex()}`,
    sourceId: '',
    syncId: '',
    holdId: '',
    holdName: `iso-hold-${hex()}`,
    erasureId: '',
    marker: `zq${letters(12)}`,
    secretWord: `secretword${letters(12)}`,
    title: `iso-title-${hex()}`,
    filename: `iso-file-${hex()}.md`,
    externalId: `iso-external-${hex()}`,
    tag: `iso-tag-${hex()}`,
    metaValue: `iso-meta-${hex()}`,
    documentId: '',
    sha256: '',
    hookPath: `/iso-hook-${hex()}`,
    hookUrl: '',
    hookDescription: `iso-hook-description-${hex()}`,
    hookId: '',
    hookSecret: '',
    role: `iso-role-${hex()}`,
    group: `iso-group-${hex()}`,
    grantee: `iso-grantee-${hex()}`,
  };
  const tenantB = `other-${hex()}`;
  const headers: Record<Who | 'owner', Record<string, string>> = {
    owner: {},
    tenantB: {},
    member: {},
    anonymous: {},
  };
  const urlOf = (service: string) => `http://127.0.0.1:${suite.ports[service]!.port}`;

  const published: Published[] = [];
  const results: Result[] = [];
  /** What A's resources look like to A's admin once every probe ran. */
  let survived: Record<string, unknown[]> = {};

  /** A's values `caller` must not see, without those the request itself carries. */
  const forbidden = (caller: Who, request: string): Array<[string, string]> =>
    Object.entries(a)
      .filter(([name, value]) => {
        if (typeof value !== 'string' || value.length < 6) return false;
        if (caller === 'member' && TENANT_LEVEL.includes(name as keyof AValues)) return false;
        return !request.toLowerCase().includes(value.toLowerCase());
      })
      .map(([name, value]) => [name, value as string]);

  const leaked = (caller: Who, request: string, text: string) => {
    const lower = text.toLowerCase();
    return forbidden(caller, request)
      .filter(([, value]) => lower.includes(value.toLowerCase()))
      .map(([name]) => name);
  };

  /** A's own values in an answer to A's admin (those not sent in the request). */
  const revealed = (request: string, text: string) => {
    const lower = text.toLowerCase();
    return Object.entries(a).filter(
      ([name, value]) =>
        typeof value === 'string' &&
        value.length >= 6 &&
        name !== 'tenant' &&
        name !== 'owner' &&
        !request.toLowerCase().includes(value.toLowerCase()) &&
        lower.includes(value.toLowerCase()),
    ).length;
  };

  function judge(
    caller: Who | 'owner',
    probe: Probe,
    isPublic: boolean,
    request: string,
    outcome: Outcome,
  ): string | undefined {
    if (outcome.throttled) return `throttled (${outcome.code}): the suite's rate limits are on`;
    if (caller === 'owner') {
      if (!outcome.succeeded) return `A's admin got ${outcome.code}: ${excerpt(outcome.text)}`;
      if (probe.reveals && revealed(request, outcome.text) === 0) {
        return `A's admin found none of A's data: the case's ids find nothing: ${excerpt(outcome.text)}`;
      }
      return undefined;
    }
    const leaks = leaked(caller, request, outcome.text);
    if (leaks.length) {
      return `LEAK of ${leaks.join(', ')} (${outcome.code}): ${excerpt(outcome.text)}`;
    }
    if (outcome.internal) return `failed (${outcome.code}): ${excerpt(outcome.text)}`;
    if (outcome.refused) return undefined;
    if (outcome.errorCode && probe.absent?.includes(outcome.errorCode)) return undefined;
    const mayAnswer = isPublic || (probe.ok ?? []).includes(caller);
    if (outcome.succeeded && mayAnswer) {
      // A's only document is unreadable to both: every count they are given must be 0.
      const counted = countsIn(outcome.value);
      if (counted.length) {
        return `counts A's documents (${counted.join(', ')}): ${excerpt(outcome.text)}`;
      }
      return undefined;
    }
    return `answered ${outcome.code} where a refusal was due: ${excerpt(outcome.text)}`;
  }

  // --- REST -----------------------------------------------------------------------------------

  async function callRest(op: Published, probe: RestProbe, auth: Record<string, string>) {
    const path = op.path!.replace(/\{([^}]+)\}/g, (_match, name: string) => {
      const value = probe.params?.[name];
      if (value === undefined) throw new Error(`${op.key}: the case gives no {${name}}`);
      return encodeURIComponent(value);
    });
    const url = new URL(`${urlOf(op.service!)}${path}`);
    for (const [name, value] of Object.entries(probe.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    let body: string | FormData | undefined;
    const requestHeaders: Record<string, string> = { ...auth };
    if (probe.file) {
      const form = new FormData();
      form.append(
        'file',
        new Blob([probe.file.content], { type: probe.file.type }),
        probe.file.name,
      );
      body = form;
    } else if (probe.body !== undefined) {
      body = JSON.stringify(probe.body);
      requestHeaders['content-type'] = 'application/json';
    }
    const response = await fetch(url, {
      method: op.method!.toUpperCase(),
      headers: requestHeaders,
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    const code = response.status;
    const value = parseJson(text);
    const outcome: Outcome = {
      value,
      ...(typeof (value as { error?: { code?: unknown } } | undefined)?.error?.code === 'string'
        ? { errorCode: (value as { error: { code: string } }).error.code }
        : {}),
      code: String(code),
      refused: [401, 403, 404].includes(code),
      succeeded: code >= 200 && code < 300,
      throttled: code === 429,
      internal: code >= 500,
      // The body, then the headers (a Content-Disposition or ETag can leak too).
      text: `${text}\n\n${[...response.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}`,
    };
    return { outcome, request: json({ path, query: probe.query, body: probe.body }) };
  }

  // --- MCP ------------------------------------------------------------------------------------

  async function callMcp(item: Published, probe: McpProbe, auth: Record<string, string>) {
    const [kind, name] = item.key.split(' ') as [string, string];
    const method = probe.method ?? (kind === 'tool' ? 'tools/call' : 'resources/read');
    const params =
      method === 'tools/call'
        ? { name, arguments: probe.args ?? {} }
        : method === 'resources/read'
          ? { uri: probe.uri }
          : {};
    const response = await fetch(`${suite.queryUrl}/mcp`, {
      method: 'POST',
      headers: {
        ...auth,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const text = await response.text();
    const request = json({ method, params });
    if (response.status !== 200) {
      return {
        request,
        outcome: {
          code: String(response.status),
          refused: [401, 403, 404].includes(response.status),
          succeeded: false,
          throttled: response.status === 429,
          internal: response.status >= 500,
          text,
        } satisfies Outcome,
      };
    }
    const answer = JSON.parse(text) as {
      error?: { code: number; message: string };
      result?: { isError?: boolean; content?: Array<{ text?: string }> };
    };
    if (answer.error) {
      return {
        request,
        outcome: {
          code: `jsonrpc-error ${answer.error.code}`,
          refused: true,
          succeeded: false,
          throttled: false,
          text,
        } satisfies Outcome,
      };
    }
    const toolError = answer.result?.isError === true;
    const firstText = answer.result?.content?.[0]?.text ?? '';
    return {
      request,
      outcome: {
        value: [
          answer.result,
          ...(answer.result?.content ?? []).map((c) => parseJson(c.text ?? '')),
        ],
        code: toolError ? `tool-error ${firstText.split(':')[0]}` : 'result',
        refused: toolError,
        succeeded: !toolError,
        throttled: toolError && firstText.startsWith('rate_limited'),
        internal: toolError && firstText.startsWith('internal_error'),
        text,
      } satisfies Outcome,
    };
  }

  // --- gRPC -----------------------------------------------------------------------------------

  const grpcClients = new Map<string, GrpcClient>();
  const grpcClientFor = (address: string) => {
    let client = grpcClients.get(address);
    if (!client) {
      client = new GrpcClient(address, credentials.createInsecure());
      grpcClients.set(address, client);
    }
    return client;
  };

  async function callGrpc(item: Published, probe: GrpcProbe, auth: Record<string, string>) {
    const definition = item.definition!;
    const client = grpcClientFor(item.address!);
    const metadata = new Metadata();
    if (auth['authorization']) metadata.set('authorization', auth['authorization']);
    const request = json(probe.request);
    const deadline = Date.now() + 60_000;
    const answer = await new Promise<{ error?: ServiceError; value?: unknown }>((done) => {
      if (definition.requestStream) {
        done({ error: { code: status.UNIMPLEMENTED, details: 'client streams' } as ServiceError });
      } else if (definition.responseStream) {
        const messages: unknown[] = [];
        const stream = client.makeServerStreamRequest(
          definition.path,
          definition.requestSerialize,
          definition.responseDeserialize,
          probe.request,
          metadata,
          { deadline },
        );
        stream.on('data', (message: unknown) => messages.push(message));
        stream.on('error', (error: ServiceError) => done({ error, value: messages }));
        stream.on('end', () => done({ value: messages }));
      } else {
        client.makeUnaryRequest(
          definition.path,
          definition.requestSerialize,
          definition.responseDeserialize,
          probe.request,
          metadata,
          { deadline },
          (error, value) => done(error ? { error } : { value }),
        );
      }
    });
    const code = answer.error ? answer.error.code : status.OK;
    const text = answer.error
      ? `${answer.error.details ?? ''} ${grpcText(answer.error.metadata?.getMap() ?? {})} ${grpcText(answer.value ?? [])}`
      : grpcText(answer.value);
    return {
      request,
      outcome: {
        value: answer.value,
        code: status[code],
        refused: [status.UNAUTHENTICATED, status.PERMISSION_DENIED, status.NOT_FOUND].includes(
          code,
        ),
        succeeded: code === status.OK,
        throttled: code === status.RESOURCE_EXHAUSTED,
        internal: [status.INTERNAL, status.UNKNOWN].includes(code),
        text,
      } satisfies Outcome,
    };
  }

  // --- Discovery ------------------------------------------------------------------------------

  async function discoverRest(): Promise<void> {
    for (const service of Object.keys(suite.ports)) {
      const response = await fetch(`${urlOf(service)}/openapi.json`);
      if (response.status !== 200) continue;
      const document = (await response.json()) as {
        paths: Record<string, Record<string, { operationId?: string; security?: unknown[] }>>;
      };
      for (const [path, operations] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          if (!['get', 'put', 'post', 'delete', 'patch', 'head', 'options'].includes(method)) {
            continue;
          }
          published.push({
            surface: 'REST',
            key: `${service} ${operation.operationId ?? `${method.toUpperCase()} ${path}`}`,
            service,
            method,
            path,
            public: Array.isArray(operation.security) && operation.security.length === 0,
          });
        }
      }
    }
  }

  async function discoverMcp(): Promise<void> {
    const client = new McpClient({ name: 'e2e-isolation', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${suite.queryUrl}/mcp`), {
        requestInit: { headers: headers.owner },
      }),
    );
    try {
      const { tools } = await client.listTools();
      for (const tool of tools) published.push({ surface: 'MCP', key: `tool ${tool.name}` });
      const { resources } = await client.listResources();
      const { resourceTemplates } = await client.listResourceTemplates();
      for (const template of resourceTemplates) {
        published.push({ surface: 'MCP', key: `resource-template ${template.uriTemplate}` });
      }
      // Listed resources include the template's own (kb://documents/<id>): those are its.
      const templated = resourceTemplates.map(
        (t) => new RegExp(`^${t.uriTemplate.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      );
      for (const resource of resources) {
        if (templated.some((t) => t.test(resource.uri))) continue;
        published.push({ surface: 'MCP', key: `resource ${resource.uri}` });
      }
    } finally {
      await client.close();
    }
  }

  function discoverGrpc(): void {
    const files = (readdirSync(PROTO_ROOT, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.proto'))
      .sort();
    const definitions = loadSync(files, {
      includeDirs: [PROTO_ROOT],
      keepCase: true,
      longs: String,
      enums: String,
      defaults: false,
      oneofs: true,
    });
    for (const [name, definition] of Object.entries(definitions)) {
      if (!name.startsWith('kb.v1.')) continue;
      const methods = Object.values(definition as object) as Array<
        MethodDefinition<object, object> | undefined
      >;
      // A service: every member is a method with a path (a message type has none).
      if (!methods.length || !methods.every((m) => typeof m?.path === 'string')) continue;
      const server = GRPC_SERVERS[name];
      for (const [methodName, method] of Object.entries(definition as object)) {
        published.push({
          surface: 'gRPC',
          key: `${name}/${methodName}`,
          definition: method as MethodDefinition<object, object>,
          ...(server ? { address: `127.0.0.1:${suite.ports[server]!.grpcPort}` } : {}),
        });
      }
    }
  }

  // --- Tenant A's resources -------------------------------------------------------------------

  const ownerApi = async (base: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...headers.owner,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
    };
  };

  async function createResources(): Promise<void> {
    const documents = suite.documentUrl;
    const acl = urlOf('acl-service');
    const created = await ownerApi(documents, 'POST', '/v1/knowledge-bases', {
      id: a.kbId,
      name: a.kbName,
      description: a.kbDescription,
    });
    expect(created).toMatchObject({ status: 201 });

    a.hookUrl = `${receiver.url}${a.hookPath}`;
    const hook = await ownerApi(suite.webhookUrl, 'POST', '/v1/webhooks', {
      url: a.hookUrl,
      events: ['document.indexed', 'document.updated', 'document.deleted', 'source.synced'],
      description: a.hookDescription,
    });
    expect(hook).toMatchObject({ status: 201 });
    a.hookId = String(hook.body['id']);
    a.hookSecret = String(hook.body['secret']);

    // The document: only its owner (and A's admins) may read it; the member may not.
    const form = new FormData();
    const content = [
      `# ${a.title}`,
      '',
      `The ${a.marker} ledger is kept in the vault; its code word is ${a.secretWord}.`,
    ].join('\n');
    form.append('file', new Blob([content], { type: 'text/markdown' }), a.filename);
    form.append('title', a.title);
    form.append('metadata', json({ project: a.metaValue }));
    form.append('tags', json([a.tag]));
    form.append('knowledgeBaseIds', json([a.kbId]));
    form.append('acl', json({ users: [], groups: [], roles: [], tenant: false }));
    form.append('externalId', a.externalId);
    const uploaded = await fetch(`${documents}/v1/documents`, {
      method: 'POST',
      headers: headers.owner,
      body: form,
    });
    const document = (await uploaded.json()) as { id: string; sha256: string };
    expect(uploaded.status).toBe(202);
    a.documentId = document.id;
    a.sha256 = document.sha256;

    // The source: its bucket holds nothing under the prefix; one sync gives a sync id.
    await bucketStore.ensureBucket();
    const source = await ownerApi(documents, 'POST', '/v1/sources', {
      name: a.sourceName,
      knowledgeBaseId: a.kbId,
      kind: 's3',
      bucket: a.bucket,
      prefix: a.prefix,
    });
    expect(source).toMatchObject({ status: 201 });
    a.sourceId = String(source.body['id']);
    const sync = await ownerApi(documents, 'POST', `/v1/sources/${a.sourceId}/sync`);
    expect(sync).toMatchObject({ status: 200, body: { status: 'succeeded' } });
    a.syncId = String(sync.body['id']);

    // A legal hold on A's document (ADR 52).
    const hold = await ownerApi(documents, 'POST', '/v1/holds', {
      name: a.holdName,
      documentIds: [a.documentId],
    });
    expect(hold).toMatchObject({ status: 201 });
    a.holdId = String(hold.body['id']);
    // An erasure job of A's (of a user who uploaded nothing): its record names A's member.
    const erasure = await ownerApi(documents, 'POST', '/v1/erasures', { uploadedBy: a.member });
    expect(erasure).toMatchObject({ status: 202 });
    a.erasureId = String(erasure.body['id']);

    // The policy: a role of A's own, given to a user, who is also in a group.
    expect(
      await ownerApi(acl, 'PUT', `/v1/acl/roles/${a.role}/permissions`, {
        permissions: [{ resource: 'documents', action: 'read' }],
      }),
    ).toMatchObject({ status: 200 });
    expect(
      await ownerApi(acl, 'POST', '/v1/acl/role-assignments', {
        member: `u:${a.grantee}`,
        role: a.role,
      }),
    ).toMatchObject({ status: 200 });
    expect(
      await ownerApi(acl, 'POST', `/v1/acl/groups/${a.group}/members`, { user: a.grantee }),
    ).toMatchObject({ status: 200 });

    await waitFor(
      () => ownerApi(documents, 'GET', `/v1/documents/${a.documentId}`),
      (d) => d.body['status'] === 'indexed' || d.body['status'] === 'failed',
      120_000,
    );
    expect((await ownerApi(documents, 'GET', `/v1/documents/${a.documentId}`)).body).toMatchObject({
      status: 'indexed',
    });
  }

  // --- The run --------------------------------------------------------------------------------

  async function runAll(): Promise<void> {
    const tasks: Array<{ phase: Phase; run: () => Promise<Result> }> = [];
    for (const item of published) {
      const probes: Probe[] =
        item.surface === 'REST'
          ? (REST_CASES[item.key]?.(a) ?? [])
          : item.surface === 'MCP'
            ? (MCP_CASES[item.key]?.(a) ?? [])
            : (GRPC_CASES[item.key]?.(a) ?? []);
      if (item.surface === 'gRPC' && !item.address) continue; // reported by the coverage test
      for (const probe of probes) {
        const phase: Phase =
          probe.phase ??
          (item.surface !== 'REST' || item.method === 'get' ? 1 : item.method === 'delete' ? 3 : 2);
        // A's admin reads first, with the same ids: the control.
        const callers: Array<Who | 'owner'> = phase <= 1 ? ['owner', ...CALLERS] : CALLERS;
        for (const caller of callers) {
          tasks.push({
            phase,
            run: async () => {
              const label = probe.label ?? '';
              try {
                const { outcome, request } =
                  item.surface === 'REST'
                    ? await callRest(item, probe as RestProbe, headers[caller])
                    : item.surface === 'MCP'
                      ? await callMcp(item, probe as McpProbe, headers[caller])
                      : await callGrpc(item, probe as GrpcProbe, headers[caller]);
                const problem = judge(caller, probe, item.public === true, request, outcome);
                const answer = outcome.text;
                return { key: item.key, label, caller, code: outcome.code, problem, answer };
              } catch (error) {
                const problem = String(error);
                return { key: item.key, label, caller, code: 'error', problem, answer: '' };
              }
            },
          });
        }
      }
    }
    for (const phase of [0, 1, 2, 3, 4] as Phase[]) {
      const batch = tasks.filter((t) => t.phase === phase).map((t) => t.run);
      results.push(...(await pool(batch, CONCURRENCY)));
    }
  }

  beforeAll(async () => {
    await receiver.start();
    headers.owner = {
      authorization: `Bearer ${await testToken({ tenant: a.tenant, user: a.owner, roles: ['admin'] })}`,
    };
    headers.tenantB = {
      authorization: `Bearer ${await testToken({ tenant: tenantB, user: `iso-b-admin-${hex()}`, roles: ['admin'] })}`,
    };
    headers.member = {
      authorization: `Bearer ${await testToken({ tenant: a.tenant, user: a.member, roles: [] })}`,
    };
    await createResources();
    await discoverRest();
    await discoverMcp();
    discoverGrpc();
    await runAll();
    // A's resources as A's admin sees them once every probe ran.
    const document = await ownerApi(suite.documentUrl, 'GET', `/v1/documents/${a.documentId}`);
    const kb = await ownerApi(suite.documentUrl, 'GET', `/v1/knowledge-bases/${a.kbId}`);
    const source = await ownerApi(suite.documentUrl, 'GET', `/v1/sources/${a.sourceId}`);
    const hook = await ownerApi(suite.webhookUrl, 'GET', `/v1/webhooks/${a.hookId}`);
    const policy = await ownerApi(urlOf('acl-service'), 'GET', '/v1/acl/policy');
    survived = {
      document: [
        document.status,
        document.body['version'],
        document.body['acl'],
        document.body['tags'],
      ],
      knowledgeBase: [kb.status, kb.body['description']],
      source: [source.status, source.body['bucket']],
      webhook: [hook.status, hook.body['description'], hook.body['enabled']],
      policy: [policy.status, JSON.stringify(policy.body)],
    };
  });

  afterAll(async () => {
    for (const client of grpcClients.values()) client.close();
    await receiver.stop();
    bucketStore.destroy();
    rmSync(modelDir, { recursive: true, force: true });
    // The operations covered, with what each caller got: the suite's own account of itself.
    const rows = published.map((item) => {
      const mine = results.filter((r) => r.key === item.key);
      const codes = (caller: Who | 'owner') =>
        [...new Set(mine.filter((r) => r.caller === caller).map((r) => r.code))].join(' ') || '-';
      return {
        surface: item.surface,
        operation: item.key,
        probes: mine.length,
        'A admin': codes('owner'),
        'B admin': codes('tenantB'),
        'A member': codes('member'),
        'no token': codes('anonymous'),
        problems: mine.filter((r) => r.problem).length,
      };
    });
    if (process.env['KB_ISOLATION_VERBOSE'] === '1') {
      console.log(
        results
          .map(
            (r) =>
              `${r.key}${r.label ? ` (${r.label})` : ''} ${r.caller}: ${r.code} ${excerpt(r.answer)}`,
          )
          .join('\n'),
      );
    }
    console.log(
      `isolation: ${published.length} published operations, ${results.length} probes\n` +
        rows
          .map(
            (r) =>
              `${r.surface.padEnd(4)} ${r.operation.padEnd(58)} probes ${String(r.probes).padStart(2)}` +
              ` | A admin ${r['A admin'].padEnd(12)} | B admin ${r['B admin'].padEnd(18)}` +
              ` | A member ${r['A member'].padEnd(18)} | no token ${r['no token'].padEnd(14)}` +
              ` | problems ${r.problems}`,
          )
          .join('\n'),
    );
  });

  const caseKeys = (surface: Surface): string[] =>
    Object.keys(surface === 'REST' ? REST_CASES : surface === 'MCP' ? MCP_CASES : GRPC_CASES);

  it('finds operations on every surface', () => {
    const services = new Set(published.filter((p) => p.surface === 'REST').map((p) => p.service));
    expect([...services].sort()).toEqual(
      expect.arrayContaining([
        'acl-service',
        'document-service',
        'query-service',
        'webhook-service',
      ]),
    );
    expect(published.filter((p) => p.surface === 'MCP').length).toBeGreaterThan(0);
    expect(published.filter((p) => p.surface === 'gRPC').length).toBeGreaterThan(0);
  });

  it.each(['REST', 'MCP', 'gRPC'] as Surface[])(
    'has a case for every published %s operation, and none for an unpublished one',
    (surface) => {
      const publishedKeys = published.filter((p) => p.surface === surface).map((p) => p.key);
      const cases = caseKeys(surface);
      expect({
        publishedWithoutCase: publishedKeys.filter((k) => !cases.includes(k)),
        caseNotPublished: cases.filter((k) => !publishedKeys.includes(k)),
        ...(surface === 'gRPC'
          ? {
              serviceWithoutServer: published
                .filter((p) => p.surface === 'gRPC' && !p.address)
                .map((p) => p.key),
            }
          : {}),
      }).toEqual({
        publishedWithoutCase: [],
        caseNotPublished: [],
        ...(surface === 'gRPC' ? { serviceWithoutServer: [] } : {}),
      });
    },
  );

  describe.each([
    ['REST', Object.keys(REST_CASES)],
    ['MCP', Object.keys(MCP_CASES)],
    ['gRPC', Object.keys(GRPC_CASES)],
  ] as const)('%s', (_surface, keys) => {
    it.each(keys)(
      '%s: refused to B’s admin, A’s member and no token, nothing of A leaked',
      (key) => {
        const mine = results.filter((r) => r.key === key);
        expect(mine.length).toBeGreaterThan(0);
        for (const caller of CALLERS) {
          expect(mine.filter((r) => r.caller === caller).length).toBeGreaterThan(0);
        }
        expect(
          mine
            .filter((r) => r.problem)
            .map((r) => `${r.caller}${r.label ? ` (${r.label})` : ''}: ${r.problem}`),
        ).toEqual([]);
      },
    );
  });

  it('tells a leak, a count and an unexpected success from a refusal (the judge itself)', () => {
    const answer = (code: string, text: string, extra: Partial<Outcome> = {}): Outcome => ({
      code,
      refused: ['401', '403', '404'].includes(code),
      succeeded: code.startsWith('2'),
      throttled: code === '429',
      text,
      value: parseJson(text),
      ...extra,
    });
    const error = json({ error: { code: 'document_not_found', message: 'not found' } });
    expect(judge('tenantB', {}, false, '{}', answer('404', error))).toBeUndefined();
    // A's id in a refusal the caller did not name, or in the headers of one.
    expect(judge('tenantB', {}, false, '{}', answer('404', `${error} ${a.documentId}`))).toMatch(
      /^LEAK of documentId/,
    );
    // The same id is no leak when the caller sent it.
    expect(
      judge('tenantB', {}, false, json({ id: a.documentId }), answer('404', a.documentId)),
    ).toBeUndefined();
    // What members read by design is no leak to a member; a document's title is.
    const kb = json({ id: a.kbId, name: a.kbName });
    expect(judge('member', { ok: MEMBER }, false, '{}', answer('200', kb))).toBeUndefined();
    expect(judge('tenantB', { ok: OWN }, false, '{}', answer('200', kb))).toMatch(/^LEAK of kbId/);
    expect(judge('member', { ok: OWN }, false, '{}', answer('200', a.title))).toMatch(/^LEAK/);
    expect(
      judge('member', { ok: MEMBER }, false, '{}', answer('200', json({ documentCount: 1 }))),
    ).toMatch(/^counts A's documents/);
    expect(judge('tenantB', {}, false, '{}', answer('200', '{}'))).toMatch(/^answered 200/);
    expect(judge('tenantB', {}, false, '{}', answer('429', '{}'))).toMatch(/^throttled/);
  });

  it('leaves every resource of A in place', () => {
    expect(survived).toEqual({
      document: [200, 1, { users: [], groups: [], roles: [], tenant: false }, [a.tag]],
      knowledgeBase: [200, a.kbDescription],
      source: [200, a.bucket],
      webhook: [200, a.hookDescription, true],
      policy: [200, expect.stringContaining(`"r:${a.role}"`)],
    });
    const policy = survived['policy']![1] as string;
    expect(policy).toContain(`"u:${a.grantee}","r:${a.role}"`);
    expect(policy).toContain(`"u:${a.grantee}","g:${a.group}"`);
  });
});
