import type { Caller } from '@kb/auth';
import type { TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';

import {
  filterSchema,
  knowledgeBaseIdsSchema,
  SEARCH_MODES,
  type SearchHit,
  type SearchRequest,
  searchRequestSchema,
  timeoutMsSchema,
} from '../search/search.model';
import { SearchService } from '../search/search.service';
import type { ChatMessage } from './chat-model.rewriter';
import { packContext, packedContextSchema } from './context.packing';
import { ContextRerankDefaults } from './context-rerank.defaults';
import { ConversationRewriter, QUERY_STRATEGIES } from './conversation.rewriter';

const chatMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z
    .string()
    .max(32_000)
    .nullable()
    .default('')
    .transform((c) => c ?? ''),
});

export const retrieveContextSchema = z
  .object({
    question: z
      .string()
      .trim()
      .max(4000)
      .default('')
      .describe('The question; may be left out when messages end with the user’s question.'),
    messages: z
      .array(chatMessageSchema)
      .max(100)
      .default([])
      .describe(
        'The conversation so far, oldest first, in OpenAI chat shape ({role, content}). A ' +
          'follow-up question is searched as a standalone query built from earlier user turns.',
      ),
    tokenBudget: z
      .number()
      .int()
      .min(0)
      .max(32_000, 'tokenBudget must be at most 32000')
      .default(2000)
      .transform((b) => (b === 0 ? 2000 : b))
      .refine((b) => b >= 64, 'tokenBudget must be at least 64'),
    candidates: z
      .number()
      .int()
      .min(0)
      .max(100, 'candidates must be at most 100')
      .default(20)
      .transform((c) => (c === 0 ? 20 : c)),
    mode: z.enum(SEARCH_MODES).default('hybrid'),
    knowledgeBaseIds: knowledgeBaseIdsSchema,
    filter: filterSchema,
    timeoutMs: timeoutMsSchema,
    rerank: z
      .boolean()
      .optional()
      .describe(
        'Rerank the candidates with the cross-encoder, within its budget. Absent: the named knowledge bases decide (true when any has contextRerank); none named: no.',
      ),
  })
  .refine(
    (r) => r.question !== '' || r.messages.some((m) => m.role === 'user' && m.content.trim()),
    {
      message: 'question must not be empty (or messages must end with a user question)',
      path: ['question'],
    },
  );
export type RetrieveContextRequest = z.infer<typeof retrieveContextSchema>;

export const retrieveContextResponseSchema = packedContextSchema.extend({
  degraded: z.boolean(),
  degradedReason: z.string().optional(),
  /** How the searched query was formed from the question and the conversation. */
  queryStrategy: z.enum(QUERY_STRATEGIES),
  /** The query the search ran with. */
  standaloneQuery: z.string(),
  /** What the rerank did: `off`, `applied` or `skipped: <reason>`. */
  rerank: z.string(),
});

/**
 * The question and the conversation before it: the `question` field with all `messages` as
 * history, or without it the last user message with the messages before it.
 */
export function splitConversation(request: RetrieveContextRequest): {
  question: string;
  history: ChatMessage[];
} {
  if (request.question !== '') return { question: request.question, history: request.messages };
  const last = request.messages.findLastIndex((m) => m.role === 'user' && m.content.trim());
  return {
    question: request.messages[last]!.content.trim(),
    history: request.messages.slice(0, last),
  };
}
export type RetrieveContextResponse = z.infer<typeof retrieveContextResponseSchema>;

/** Context for the LLM orchestrator: search, then merge, deduplicate and pack to the budget. */
@Injectable()
export class ContextService {
  constructor(
    @Inject(SearchService) private readonly search: Pick<SearchService, 'search'>,
    private readonly rewriter: ConversationRewriter,
    @Inject(ContextRerankDefaults)
    private readonly rerankDefaults: Pick<ContextRerankDefaults, 'rerankFor'>,
  ) {}

  async retrieve(
    tenantId: TenantId,
    request: RetrieveContextRequest,
    principals?: string[],
    caller?: Caller,
  ): Promise<RetrieveContextResponse & { hits: SearchHit[] }> {
    const started = performance.now();
    const { question, history } = splitConversation(request);
    const [{ strategy, query }, rerank] = await Promise.all([
      this.rewriter.standaloneQuery(question, history),
      request.rerank ??
        this.rerankDefaults.rerankFor(tenantId, request.knowledgeBaseIds ?? [], caller),
    ]);
    // The search defaults (no paging, MMR or neighbours; convex fusion) are the schema's.
    // The filter was parsed with the rest of the context request: it joins the parsed search.
    const search: SearchRequest = {
      ...searchRequestSchema.parse({
        query,
        topK: request.candidates,
        knowledgeBaseIds: request.knowledgeBaseIds,
        mode: request.mode,
        rerank,
      }),
      filter: request.filter,
      // What the rewrite left of the caller's budget bounds the search (docs/adr/0042).
      ...(request.timeoutMs === undefined
        ? {}
        : {
            timeoutMs: Math.max(1, Math.floor(request.timeoutMs - (performance.now() - started))),
          }),
    };
    const result = await this.search.search(tenantId, search, principals, caller);
    return {
      hits: result.hits,
      ...packContext(result.hits, request.tokenBudget),
      degraded: result.degraded,
      ...(result.degradedReason ? { degradedReason: result.degradedReason } : {}),
      queryStrategy: strategy,
      standaloneQuery: query,
      rerank: result.rerank,
    };
  }
}
