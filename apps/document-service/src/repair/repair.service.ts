import type { Access } from '@kb/auth';
import type { TenantId } from '@kb/contracts';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { DocumentMembershipService } from '../documents/document-membership.service';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { TransactionRunner } from '../platform/transaction.runner';
import { RepairError, RepairErrorCode } from './repair.errors';
import { RepairRepository } from './repair.repository';

/** Documents re-driven per transaction. */
const PAGE = 500;

export interface RepairResult {
  /** Documents of the tenant sent through their pipelines again. */
  redriven: number;
  tookMs: number;
}

/**
 * After a restore (docs/adr/0040): every document of the tenant goes through its pipelines again,
 * from its original, with its current version — the way the reconciler re-drives a stalled one.
 * The parser rewrites the extracted text and chunks in S3, the embedder finds every chunk in the
 * embedding cache, indexing-service upserts the same chunks (keyed by document, version, chunk).
 * Every stage is idempotent and statuses only move forward, so an `indexed` document stays
 * `indexed` throughout and nothing is duplicated.
 */
@Injectable()
export class RepairService {
  private readonly logger = new Logger(RepairService.name);

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly repository: RepairRepository,
    private readonly membership: DocumentMembershipService,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
  ) {}

  async repair(tenantId: TenantId, access: Access): Promise<RepairResult> {
    if (!access.isAdmin) {
      throw new RepairError(
        RepairErrorCode.PermissionDenied,
        `only a tenant admin may repair the tenant's documents (${access.userId} is not one)`,
      );
    }
    const started = Date.now();
    let redriven = 0;
    let after: string | undefined;
    for (;;) {
      const page = await this.transactions.run(async (trx) => {
        const documents = await this.repository.page(trx, tenantId, after, PAGE);
        for (const document of documents) await this.membership.sendThroughPipelines(trx, document);
        return documents;
      });
      if (page.length === 0) break;
      redriven += page.length;
      after = page[page.length - 1]!.id;
      this.outbox.wake();
      if (page.length < PAGE) break;
    }
    this.logger.log(
      `repair: ${redriven} documents of tenant ${tenantId} sent through the pipelines`,
    );
    return { redriven, tookMs: Date.now() - started };
  }
}
