import type { QuotasView } from '@kb/api-client';
import type { Caller } from '@kb/auth';
import type { TenantId } from '@kb/contracts';
import { QuotaExceededError } from '@kb/errors';
import { meter } from '@kb/observability';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { LRUCache } from 'lru-cache';

import type { SearchCache } from '../cache/search.cache';
import { DocumentsClient } from '../documents/documents.client';
import { SEARCH_CACHE } from '../platform/tokens';

const refused = meter().createCounter('kb_quota_exceeded_total', {
  description: 'Calls refused because a quota was reached, by quota',
});

/** A tenant's limits are read again after this long: a change shows within it. */
const LIMITS_TTL_MS = 30_000;
/** After a failed read, searches are admitted without asking again for this long. */
const UNREAD_TTL_MS = 5_000;
/** A search waits no longer than this for its tenant's limits; then it is admitted. */
const READ_TIMEOUT_MS = 500;
const NO_LIMITS: SearchLimits = { tenant: null, knowledgeBases: new Map() };
const DAY_SECONDS = 86_400;

interface SearchLimits {
  tenant: number | null;
  knowledgeBases: Map<string, number>;
}

/**
 * Searches per UTC day (docs/adr/0053): each search (a context call is one) of a tenant with a
 * limit adds one to a Redis counter of the day, the tenant's and each limited knowledge base's it
 * names, before any work is done; past the limit it is 429 `quota_exceeded` with `Retry-After` at
 * the next midnight. The limits come from document-service (`GET /v1/quotas`, with the caller's
 * token), kept for 30 s. Without Redis, or when the limits cannot be read, searches are admitted
 * (fail open: a quota is a budget, not a security boundary).
 */
@Injectable()
export class SearchQuota {
  private readonly logger = new Logger(SearchQuota.name);
  private readonly limits = new LRUCache<string, SearchLimits>({ max: 10_000, ttl: LIMITS_TTL_MS });
  /** One read per tenant at a time, shared by the searches that wait for it. */
  private readonly reading = new Map<string, Promise<SearchLimits>>();

  constructor(
    @Inject(DocumentsClient) private readonly documents: Pick<DocumentsClient, 'quotas'>,
    @Optional() @Inject(SEARCH_CACHE) private readonly counters: SearchCache | null = null,
  ) {}

  async admit(
    tenantId: TenantId,
    knowledgeBaseIds: readonly string[],
    caller: Caller | undefined,
    now = new Date(),
  ): Promise<void> {
    if (!caller || !this.counters?.increment) return;
    const limits = await this.limitsOf(tenantId, caller);
    if (!limits) return;
    const day = now.toISOString().slice(0, 10);
    const retryAfter = Math.max(
      1,
      Math.ceil((Date.parse(`${day}T00:00:00Z`) + DAY_SECONDS * 1000 - now.getTime()) / 1000),
    );
    const scopes: Array<[string, number]> = [];
    if (limits.tenant !== null) scopes.push(['', limits.tenant]);
    for (const id of new Set(knowledgeBaseIds)) {
      const limit = limits.knowledgeBases.get(id);
      if (limit !== undefined) scopes.push([id, limit]);
    }
    for (const [knowledgeBaseId, limit] of scopes) {
      const key = `kb:quota:v1:${tenantId}:${knowledgeBaseId}:${day}:searches`;
      const count = await this.counters.increment(key, 2 * DAY_SECONDS);
      if (count !== undefined && count > limit) {
        refused.add(1, { quota: 'searchesPerDay' });
        throw new QuotaExceededError(
          {
            quota: 'searchesPerDay',
            limit,
            used: limit,
            ...(knowledgeBaseId ? { knowledgeBaseId } : {}),
          },
          retryAfter,
        );
      }
    }
  }

  private async limitsOf(tenantId: TenantId, caller: Caller): Promise<SearchLimits | undefined> {
    const known = this.limits.get(tenantId);
    if (known) return known;
    let read = this.reading.get(tenantId);
    if (!read) {
      read = this.documents
        .quotas(caller, READ_TIMEOUT_MS)
        .then(searchLimitsOf, (error: unknown) => {
          // Fail open, and do not ask again for every search while document-service is away.
          this.logger.debug(
            `tenant ${tenantId}: quotas unread, searches admitted (${String(error)})`,
          );
          this.limits.set(tenantId, NO_LIMITS, { ttl: UNREAD_TTL_MS });
          return NO_LIMITS;
        })
        .then((limits) => {
          if (limits !== NO_LIMITS) this.limits.set(tenantId, limits);
          return limits;
        })
        .finally(() => this.reading.delete(tenantId));
      this.reading.set(tenantId, read);
    }
    const limits = await read;
    return limits === NO_LIMITS ? undefined : limits;
  }
}

function searchLimitsOf(quotas: QuotasView): SearchLimits {
  const knowledgeBases = new Map<string, number>();
  for (const kb of quotas.knowledgeBases) {
    if (kb.maxSearchesPerDay !== null) knowledgeBases.set(kb.id, kb.maxSearchesPerDay);
  }
  return { tenant: quotas.tenant.maxSearchesPerDay, knowledgeBases };
}
