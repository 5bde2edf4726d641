import {
  type EditableAttributes,
  indexedTags,
  type Pipeline,
  type TenantId,
  Topics,
} from '@kb/contracts';
import type { BlobStore } from '@kb/storage';
import { Inject, Injectable } from '@nestjs/common';

import { OutboxWriter } from '../outbox/outbox.writer';
import { KnowledgeBaseDirectory } from '../pipelines/knowledge-base-directory.port';
import { TagRuleMembership } from '../pipelines/tag-rule-membership.port';
import { BLOB_STORE } from '../platform/tokens';
import type { Trx } from '../platform/transaction.runner';
import type { DocumentRecord } from './document.model';
import { attributesChangedEventOf, uploadedEventOf } from './document-events.builder';
import { DocumentsRepository } from './documents.repository';
import { matchedByRules, membershipOf, needsRedrive, spacesOf } from './membership.rules';

/**
 * A document's knowledge bases and the pipelines they send it through: membership from explicit
 * ids and tag rules, the `uploaded` event that starts the pipelines, and the re-drive when a
 * membership change adds one. Every method works in the caller's transaction.
 */
@Injectable()
export class DocumentMembershipService extends TagRuleMembership {
  constructor(
    private readonly documents: DocumentsRepository,
    private readonly knowledgeBases: KnowledgeBaseDirectory,
    private readonly outbox: OutboxWriter,
    @Inject(BLOB_STORE) private readonly blobs: Pick<BlobStore, 'bucket'>,
  ) {
    super();
  }

  /** The knowledge bases of a document with these explicit ones and tags. */
  async membershipOf(
    trx: Trx,
    tenantId: TenantId,
    explicit: string[],
    tags: string[],
  ): Promise<string[]> {
    const rules = await this.knowledgeBases.tagRulesOf(trx, tenantId);
    return membershipOf(explicit, matchedByRules(rules, tags));
  }

  pipelinesOf(trx: Trx, document: DocumentRecord): Promise<Pipeline[]> {
    return this.knowledgeBases.pipelinesOf(trx, document.tenantId, document.knowledgeBaseIds);
  }

  /** Enqueues the `uploaded` event of the document's current version: its pipelines run it. */
  async sendThroughPipelines(
    trx: Trx,
    document: DocumentRecord,
    pipelines?: Pipeline[],
  ): Promise<void> {
    await this.outbox.enqueue(
      trx,
      Topics.document,
      document.tenantId,
      document.id,
      uploadedEventOf(
        document,
        this.blobs.bucket,
        pipelines ?? (await this.pipelinesOf(trx, document)),
      ),
    );
  }

  /**
   * After a membership change (`before`: the pipelines of the old one): when the document now
   * needs a pipeline it was not indexed by, its current version goes through the pipelines again.
   * Returns the spaces it is in now, for its `attributes_changed` event.
   */
  async redriveForNewPipelines(
    trx: Trx,
    document: DocumentRecord,
    before: Pipeline[],
  ): Promise<string[]> {
    const after = await this.pipelinesOf(trx, document);
    if (needsRedrive(before, after)) await this.sendThroughPipelines(trx, document, after);
    return spacesOf(after);
  }

  /**
   * Writes an edit of a document the caller locked (`current`), with its `attributes_changed`
   * event; a knowledge base that brings a new pipeline re-drives the current version through it.
   */
  async editAttributes(
    trx: Trx,
    current: DocumentRecord,
    edit: Partial<EditableAttributes> & { inactive?: boolean },
    now: Date,
  ): Promise<DocumentRecord> {
    const { tenantId, id } = current;
    const explicit = edit.knowledgeBaseIds ?? current.explicitKnowledgeBaseIds;
    const tags = edit.tags ?? current.tags;
    const inactive = edit.inactive ?? current.inactive;
    const attributes: EditableAttributes = {
      tags,
      metadata: edit.metadata ?? current.metadata,
      knowledgeBaseIds: await this.membershipOf(trx, tenantId, explicit, tags),
    };
    const changed = await this.documents.setAttributes(
      trx,
      tenantId,
      id,
      { ...attributes, inactive, explicitKnowledgeBaseIds: explicit },
      now,
    );
    const before = await this.pipelinesOf(trx, current);
    const spaces = await this.redriveForNewPipelines(trx, changed, before);
    await this.outbox.enqueue(
      trx,
      Topics.document,
      tenantId,
      id,
      // The indexes get the inactive marker among the tags (ADR 25); the row keeps the user's.
      attributesChangedEventOf(
        id,
        { ...attributes, tags: indexedTags(tags, inactive) },
        spaces,
        changed.metaVersion,
      ),
    );
    return changed;
  }

  /**
   * Every document of the tenant whose knowledge bases differ from its explicit ones plus those
   * whose rule matches its tags is updated, and its `attributes_changed` event enqueued (the
   * indexes update in place). Returns the ids of the documents it changed.
   */
  async applyTagRules(trx: Trx, tenantId: TenantId, now: Date): Promise<string[]> {
    const drifted = await this.documents.driftedMemberships(trx, tenantId);
    for (const doc of drifted) {
      const knowledgeBaseIds = membershipOf(doc.explicit, doc.byRule);
      const before = await this.knowledgeBases.pipelinesOf(trx, tenantId, doc.knowledgeBaseIds);
      const updated = await this.documents.setMembership(
        trx,
        tenantId,
        doc.id,
        knowledgeBaseIds,
        now,
      );
      const spaces = await this.redriveForNewPipelines(trx, updated, before);
      await this.outbox.enqueue(
        trx,
        Topics.document,
        tenantId,
        doc.id,
        attributesChangedEventOf(
          doc.id,
          {
            knowledgeBaseIds,
            tags: indexedTags(doc.tags, doc.inactive),
            metadata: doc.metadata,
          },
          spaces,
          updated.metaVersion,
        ),
      );
    }
    return drifted.map((doc) => doc.id);
  }
}
