import { credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { aclv1 } from '@kb/contracts';
import { LRUCache } from 'lru-cache';

import { type Action, ADMIN_ROLE, type Caller, principal } from './caller';
import { AuthenticationError } from './tokens';

/** What a caller may see and do, as acl-service computed it. */
export interface Access {
  tenantId: string;
  userId: string;
  /** `u:`, `g:`, `r:` principals and `t:*`; a document is readable when it grants one. */
  principals: string[];
  documentActions: Set<Action>;
  /** Tenant admins read every document of the tenant: no principal filter applies. */
  isAdmin: boolean;
  /** When the earliest expiring grant behind the answer ends (ADR 54); absent when none ends. */
  validUntil?: Date;
}

/**
 * acl-service could not answer: callers fail closed (503), never open. Its message names the cause
 * for the logs; `ResolverAccessPolicy` shows the caller a generic one.
 */
export class AccessUnavailableError extends Error {}

/** The principals a read must match, or undefined for a tenant admin, who reads everything. */
export function readFilterOf(access: Access): string[] | undefined {
  return access.isAdmin ? undefined : access.principals;
}

export interface AccessResolverOptions {
  /** host:port of acl-service's gRPC server. */
  address: string;
  /** How long an answer is reused; with Kafka invalidation it bounds staleness if an event is lost. */
  ttlMs: number;
  timeoutMs?: number;
}

/**
 * Resolves callers' access through acl-service's ExpandPrincipals, forwarding their token, and
 * caches answers per token for `ttlMs`, or until the answer's `validUntil` when that comes first
 * (an expiring grant stops at its end, ADR 54). `invalidate(tenant)` (on a `kb.acl.v1` event) drops a
 * tenant's answers at once, so a revocation applies within the event's delivery time, or `ttlMs`
 * at worst.
 */
export class AccessResolver {
  private readonly client: aclv1.AccessControlClient;
  /** Answers by token, at most 10,000, each for `ttlMs`. */
  private readonly cache: LRUCache<string, Promise<Access>>;

  constructor(private readonly options: AccessResolverOptions) {
    this.cache = new LRUCache({ max: 10_000, ttl: options.ttlMs });
    this.client = new aclv1.AccessControlClient(options.address, credentials.createInsecure());
  }

  resolve(caller: Caller): Promise<Access> {
    const cached = this.cache.get(caller.token);
    if (cached) return cached;
    const access = this.expand(caller);
    this.cache.set(caller.token, access);
    access.then(
      (answer) => this.shorten(caller.token, access, answer.validUntil),
      () => this.cache.delete(caller.token),
    );
    return access;
  }

  invalidate(tenantId?: string): void {
    if (tenantId === undefined) {
      this.cache.clear();
      return;
    }
    for (const [token, access] of this.cache.entries()) {
      void access.then(
        (a) => a.tenantId === tenantId && this.cache.delete(token),
        () => undefined,
      );
    }
  }

  /** Keeps a cached answer no longer than its `validUntil`. */
  private shorten(token: string, access: Promise<Access>, validUntil: Date | undefined): void {
    if (!validUntil || this.cache.get(token) !== access) return;
    const left = validUntil.getTime() - Date.now();
    if (left <= 0) this.cache.delete(token);
    else if (left < this.options.ttlMs) this.cache.set(token, access, { ttl: left });
  }

  close(): void {
    this.client.close();
  }

  /** Nest calls this on shutdown when the resolver is a provider. */
  onApplicationShutdown(): void {
    this.close();
  }

  private expand(caller: Caller): Promise<Access> {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${caller.token}`);
    return new Promise((resolve, reject) =>
      this.client.expandPrincipals(
        {},
        metadata,
        { deadline: Date.now() + (this.options.timeoutMs ?? 2_000) },
        (error: ServiceError | null, response?: aclv1.ExpandPrincipalsResponse) => {
          if (error || !response) {
            reject(
              error?.code === status.UNAUTHENTICATED
                ? new AuthenticationError('acl-service rejected the token')
                : new AccessUnavailableError(`acl-service: ${error?.message ?? 'no answer'}`),
            );
            return;
          }
          resolve({
            tenantId: response.tenantId,
            userId: response.userId,
            principals: response.principals,
            documentActions: new Set(response.documentActions as Action[]),
            isAdmin: response.principals.includes(principal.role(ADMIN_ROLE)),
            ...(response.validUntil ? { validUntil: new Date(response.validUntil) } : {}),
          });
        },
      ),
    );
  }
}
