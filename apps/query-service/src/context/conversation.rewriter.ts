import { Inject, Injectable, Logger, Optional } from '@nestjs/common';

import type { ChatMessage, ChatModelRewriter } from './chat-model.rewriter';
import { rewriteByRule } from './follow-up.rule';

export const QUERY_STRATEGIES = ['standalone', 'history_rule', 'model_rewrite'] as const;
export type QueryStrategy = (typeof QUERY_STRATEGIES)[number];

/** The chat model that rewrites follow-ups (QUERY_REWRITE_API_URL); null when none is set. */
export const CHAT_REWRITER = Symbol('CHAT_REWRITER');

export interface StandaloneQuery {
  strategy: QueryStrategy;
  query: string;
}

/**
 * The query a context request searches with. Without earlier user turns, the question itself.
 * With them, a configured chat model rewrites the question; without a model, or when it fails,
 * the deterministic rule decides whether the question is a follow-up and carries the topic over.
 */
@Injectable()
export class ConversationRewriter {
  private readonly logger = new Logger(ConversationRewriter.name);

  constructor(
    @Optional()
    @Inject(CHAT_REWRITER)
    private readonly model: Pick<ChatModelRewriter, 'rewrite'> | null = null,
  ) {}

  async standaloneQuery(question: string, history: ChatMessage[]): Promise<StandaloneQuery> {
    const earlier = history.filter((m) => m.role === 'user').map((m) => m.content);
    if (earlier.length === 0) return { strategy: 'standalone', query: question };
    if (this.model) {
      try {
        return { strategy: 'model_rewrite', query: await this.model.rewrite(history, question) };
      } catch (error) {
        this.logger.warn(`query rewrite model failed, using the rule: ${String(error)}`);
      }
    }
    const rule = rewriteByRule(question, earlier);
    return rule.followUp
      ? { strategy: 'history_rule', query: rule.query }
      : { strategy: 'standalone', query: question };
  }
}
