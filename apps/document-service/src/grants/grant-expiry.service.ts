import { Inject, Injectable, Logger } from '@nestjs/common';

import { applyAcl } from '../documents/apply-acl';
import { withoutEnded } from '../documents/document-grants';
import { DocumentsRepository } from '../documents/documents.repository';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { OutboxWriter } from '../outbox/outbox.writer';
import { CLOCK, type Clock } from '../platform/tokens';
import { TransactionRunner } from '../platform/transaction.runner';
import { type EndedGrantDocuments, EndedGrantsRepository } from './ended-grants.repository';

/** Documents rewritten per run; a longer backlog waits for the next tick. */
const BATCH = 200;

/**
 * Strips ended entries (`acl.until`, docs/adr/0054) from documents' ACLs through the normal ACL
 * change: new principals, `acl_changed` for the indexes and `document_acl_changed` by `system`.
 * Search stopped honouring them at their end (acl-service no longer expands to their grant
 * principals); this tidies the ACL and the indexes.
 */
@Injectable()
export class GrantExpiryService {
  private readonly logger = new Logger(GrantExpiryService.name);

  constructor(
    @Inject(EndedGrantsRepository) private readonly candidates: EndedGrantDocuments,
    private readonly documents: DocumentsRepository,
    private readonly transactions: TransactionRunner,
    private readonly events: OutboxWriter,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** One run: how many documents' ACLs lost ended entries. */
  async run(): Promise<number> {
    const now = this.clock();
    let changed = 0;
    for (const { tenantId, id } of await this.candidates.documentsWithEnded(now, BATCH)) {
      const done = await this.transactions.run(async (trx) => {
        // Decided again under the lock: the owner may have replaced the ACL meanwhile.
        const current = await this.documents.lockForUpdate(trx, tenantId, id);
        const acl = current && withoutEnded(current.acl, now);
        if (!acl) return false;
        const deps = { documents: this.documents, events: this.events };
        return (
          (await applyAcl(deps, trx, { tenantId, id, acl, actor: 'system', now })) !== undefined
        );
      });
      if (done) changed += 1;
    }
    if (changed > 0) {
      this.outbox.wake();
      this.logger.log(`removed ended grants from ${changed} documents`);
    }
    return changed;
  }
}
