import type { Access } from '@kb/auth';
import type { TenantId } from '@kb/contracts';
import { DomainError, ErrorKind, type QuotaDetails, QuotaExceededError } from '@kb/errors';
import { meter } from '@kb/observability';
import { Inject, Injectable } from '@nestjs/common';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { CLOCK, type Clock } from '../platform/tokens';
import type { EffectiveQuotas, QuotasView, SetQuotas, UsageQuery, UsageView } from './usage.model';
import { type QuotaRow, UsageRepository } from './usage.repository';

const refused = meter().createCounter('kb_quota_exceeded_total', {
  description: 'Calls refused because a quota was reached, by quota',
});

export type QuotaConfig = Pick<
  DocumentConfig,
  | 'QUOTA_MAX_DOCUMENTS'
  | 'QUOTA_MAX_BYTES'
  | 'QUOTA_MAX_KNOWLEDGE_BASES'
  | 'QUOTA_MAX_SEARCHES_PER_DAY'
>;

/** What uploads and knowledge-base creation ask before doing any work. */
export interface QuotaCheck {
  /** Refuses (`quota_exceeded`) a new document of `bytes` that would pass a limit. */
  beforeUpload(tenantId: TenantId, knowledgeBaseIds: string[], bytes: number): Promise<void>;
  /** Refuses a new knowledge base past the tenant's limit. */
  beforeKnowledgeBase(tenantId: TenantId): Promise<void>;
}

/** No limits: the in-memory test fixture's quotas. */
export const unlimitedQuotas: QuotaCheck = {
  beforeUpload: async () => Promise.resolve(),
  beforeKnowledgeBase: async () => Promise.resolve(),
};

const DAY_MS = 86_400_000;
const NONE: EffectiveQuotas = {
  maxDocuments: null,
  maxBytes: null,
  maxKnowledgeBases: null,
  maxSearchesPerDay: null,
};

/** The tighter of two limits; null is no limit. */
const tighter = (a: number | null, b: number | null | undefined): number | null =>
  a === null ? (b ?? null) : b === null || b === undefined ? a : Math.min(a, b);

/**
 * Usage and quotas (docs/adr/0053). The deployment's limits (QUOTA_*; 0 is none) are a ceiling;
 * a tenant admin may set tighter ones for the tenant and for each knowledge base. Limits on what
 * is stored are checked before an upload touches S3; searches per day are counted and refused by
 * query-service, which reads the limits here.
 */
@Injectable()
export class UsageService implements QuotaCheck {
  constructor(
    private readonly repository: UsageRepository,
    @Inject(DOCUMENT_CONFIG) private readonly config: QuotaConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async usage(tenantId: TenantId, access: Access, query: UsageQuery): Promise<UsageView> {
    requireAdmin(access, 'read the tenant\u2019s usage');
    const to = query.to ?? this.clock().toISOString().slice(0, 10);
    const from = query.from ?? new Date(Date.parse(to) - 29 * DAY_MS).toISOString().slice(0, 10);
    if (from > to) throw invalid(`from (${from}) is after to (${to})`);
    if (Date.parse(to) - Date.parse(from) > 366 * DAY_MS) throw invalid('at most 366 days');
    const [stored, days, knowledgeBases] = await Promise.all([
      this.repository.stored(tenantId),
      this.repository.activity(tenantId, query.knowledgeBaseId ?? '', from, to),
      this.repository.knowledgeBaseCount(tenantId),
    ]);
    const totals = { searches: 0, contextCalls: 0, reranks: 0, uploads: 0 };
    for (const day of days) {
      totals.searches += day.searches;
      totals.contextCalls += day.contextCalls;
      totals.reranks += day.reranks;
      totals.uploads += day.uploads;
    }
    return {
      from,
      to,
      stored: { ...stored.total, knowledgeBases },
      knowledgeBases: stored.knowledgeBases,
      days,
      totals,
    };
  }

  /** The limits in force; any member of the tenant may read them. */
  async quotas(tenantId: TenantId): Promise<QuotasView> {
    const rows = await this.repository.quotas(tenantId);
    const own = rows.find((r) => r.knowledgeBaseId === '');
    const deployment = this.deploymentQuotas();
    return {
      tenant: {
        maxDocuments: tighter(deployment.maxDocuments, own?.maxDocuments),
        maxBytes: tighter(deployment.maxBytes, own?.maxBytes),
        maxKnowledgeBases: tighter(deployment.maxKnowledgeBases, own?.maxKnowledgeBases),
        maxSearchesPerDay: tighter(deployment.maxSearchesPerDay, own?.maxSearchesPerDay),
      },
      knowledgeBases: rows
        .filter((r) => r.knowledgeBaseId !== '')
        .map(({ knowledgeBaseId, ...limits }) => ({
          id: knowledgeBaseId,
          ...limits,
          // The tenant's count of knowledge bases is no knowledge base's limit.
          maxKnowledgeBases: null,
        })),
    };
  }

  /** A tenant admin sets the tenant's or a knowledge base's limits; fields left out are kept. */
  async setQuotas(tenantId: TenantId, access: Access, input: SetQuotas): Promise<QuotasView> {
    requireAdmin(access, 'set quotas');
    const { knowledgeBaseId = '', ...limits } = input;
    if (
      knowledgeBaseId !== '' &&
      !(await this.repository.knowledgeBaseExists(tenantId, knowledgeBaseId))
    ) {
      throw new DomainError(
        'knowledge_base_not_found',
        ErrorKind.NotFound,
        `knowledge base ${knowledgeBaseId} not found`,
      );
    }
    const current = (await this.repository.quotas(tenantId)).find(
      (r) => r.knowledgeBaseId === knowledgeBaseId,
    );
    const row: QuotaRow = { ...(current ?? { ...NONE, knowledgeBaseId }), ...limits };
    await this.repository.setQuotas(tenantId, row, access.userId, this.clock());
    return this.quotas(tenantId);
  }

  async beforeUpload(tenantId: TenantId, knowledgeBaseIds: string[], bytes: number): Promise<void> {
    const { tenant, knowledgeBases } = await this.quotas(tenantId);
    await this.checkStored(tenantId, '', tenant, bytes);
    for (const limits of knowledgeBases) {
      if (knowledgeBaseIds.includes(limits.id)) {
        await this.checkStored(tenantId, limits.id, limits, bytes);
      }
    }
  }

  async beforeKnowledgeBase(tenantId: TenantId): Promise<void> {
    const { tenant } = await this.quotas(tenantId);
    if (tenant.maxKnowledgeBases === null) return;
    const used = await this.repository.knowledgeBaseCount(tenantId);
    if (used >= tenant.maxKnowledgeBases) {
      throw exceeded({ quota: 'knowledgeBases', limit: tenant.maxKnowledgeBases, used });
    }
  }

  private async checkStored(
    tenantId: TenantId,
    knowledgeBaseId: string,
    limits: EffectiveQuotas,
    bytes: number,
  ): Promise<void> {
    if (limits.maxDocuments === null && limits.maxBytes === null) return;
    const stored = await this.repository.storedIn(tenantId, knowledgeBaseId);
    const scope = knowledgeBaseId === '' ? {} : { knowledgeBaseId };
    if (limits.maxDocuments !== null && stored.documents + 1 > limits.maxDocuments) {
      throw exceeded({
        quota: 'documents',
        limit: limits.maxDocuments,
        used: stored.documents,
        ...scope,
      });
    }
    if (limits.maxBytes !== null && stored.bytes + bytes > limits.maxBytes) {
      throw exceeded({ quota: 'bytes', limit: limits.maxBytes, used: stored.bytes, ...scope });
    }
  }

  private deploymentQuotas(): EffectiveQuotas {
    const orNone = (value: number) => (value > 0 ? value : null);
    return {
      maxDocuments: orNone(this.config.QUOTA_MAX_DOCUMENTS),
      maxBytes: orNone(this.config.QUOTA_MAX_BYTES),
      maxKnowledgeBases: orNone(this.config.QUOTA_MAX_KNOWLEDGE_BASES),
      maxSearchesPerDay: orNone(this.config.QUOTA_MAX_SEARCHES_PER_DAY),
    };
  }
}

function exceeded(details: QuotaDetails): QuotaExceededError {
  refused.add(1, { quota: details.quota });
  return new QuotaExceededError(details);
}

const invalid = (message: string) =>
  new DomainError('invalid_usage_query', ErrorKind.InvalidArgument, message);

function requireAdmin(access: Access, what: string): void {
  if (!access.isAdmin) {
    throw new DomainError(
      'permission_denied',
      ErrorKind.PermissionDenied,
      `only a tenant admin may ${what} (${access.userId} is not one)`,
    );
  }
}
