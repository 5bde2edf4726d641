import type { Caller } from '@kb/auth';
import type { TenantId } from '@kb/contracts';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';

import { DocumentsClient } from '../documents/documents.client';

/** How long a knowledge base's setting is used before it is read again. */
const SETTING_TTL_MS = 30_000;
const MAX_SETTINGS = 10_000;

/**
 * Whether a context call that does not say reranks (docs/adr/0047): yes when any of the knowledge
 * bases it names has `contextRerank` (document-service owns the setting; it is read with the
 * caller's token and kept `SETTING_TTL_MS`). A call over all of the tenant's knowledge bases, a
 * call without a caller's token, or a knowledge base that cannot be read does not rerank: the
 * search then answers for that knowledge base as it would anyway.
 */
@Injectable()
export class ContextRerankDefaults {
  private readonly logger = new Logger(ContextRerankDefaults.name);
  private readonly settings = new LRUCache<string, boolean>({
    max: MAX_SETTINGS,
    ttl: SETTING_TTL_MS,
  });

  constructor(
    @Inject(DocumentsClient) private readonly documents: Pick<DocumentsClient, 'knowledgeBase'>,
  ) {}

  async rerankFor(
    tenantId: TenantId,
    knowledgeBaseIds: readonly string[],
    caller: Caller | undefined,
  ): Promise<boolean> {
    if (!caller || knowledgeBaseIds.length === 0) return false;
    const answers = await Promise.all(
      knowledgeBaseIds.map((id) => this.settingOf(tenantId, id, caller)),
    );
    return answers.some(Boolean);
  }

  private async settingOf(tenantId: TenantId, id: string, caller: Caller): Promise<boolean> {
    const key = `${tenantId}\u0000${id}`;
    const known = this.settings.get(key);
    if (known !== undefined) return known;
    try {
      const setting = (await this.documents.knowledgeBase(caller, id)).contextRerank;
      this.settings.set(key, setting);
      return setting;
    } catch (error) {
      this.logger.debug(`knowledge base ${id}: its rerank setting is unread (${String(error)})`);
      return false;
    }
  }
}
