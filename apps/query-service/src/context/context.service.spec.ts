import { toTenantId } from '@kb/contracts';

import { newHit } from '../../test/support/search.fakes';
import type { SearchRequest, SearchResponse } from '../search/search.model';
import { ContextService, retrieveContextSchema } from './context.service';
import { ConversationRewriter } from './conversation.rewriter';

/** FAKE knowledge-base settings: the ids listed rerank context calls by default. */
const rerankDefaults = (rerankingIds: string[] = []) => {
  const asked: string[][] = [];
  return {
    asked,
    rerankFor: async (_tenantId: string, ids: readonly string[]) => {
      asked.push([...ids]);
      return ids.some((id) => rerankingIds.includes(id));
    },
  };
};

const contextService = (
  search: ConstructorParameters<typeof ContextService>[0],
  defaults = rerankDefaults(),
) => new ContextService(search, new ConversationRewriter(null), defaults);

/** A search that records what it was asked and answers degraded with two hits. */
function recordingSearch() {
  const asked: Array<{ request: SearchRequest; principals: string[] | undefined }> = [];
  const search = {
    search: async (
      _tenantId: string,
      request: SearchRequest,
      principals?: string[],
    ): Promise<SearchResponse> => {
      asked.push({ request, principals });
      return {
        hits: [newHit(0, 0.9), newHit(1, 0.8)],
        tookMs: 1,
        cache: 'off',
        mode: request.mode,
        confidence: 'low',
        rerank: 'off',
        mmr: 'off',
        details: 'applied',
        queryType: 'keywords',
        total: 2,
        totalRelation: 'eq',
        degraded: true,
        degradedReason: 'vector_search_unavailable',
      };
    },
  };
  return { search, asked };
}

describe('ContextService', () => {
  it('searches with the context request and the search defaults', async () => {
    const { search, asked } = recordingSearch();
    const request = retrieveContextSchema.parse({
      question: ' sail rigging ',
      candidates: 30,
      mode: 'lexical',
      knowledgeBaseIds: ['kb1'],
      filter: { tags: 'finance' },
    });
    await contextService(search).retrieve(toTenantId('t1'), request, ['user:a']);
    expect(asked).toEqual([
      {
        request: {
          query: 'sail rigging',
          topK: 30,
          offset: 0,
          knowledgeBaseIds: ['kb1'],
          filter: { kind: 'compare', field: { kind: 'tags' }, operator: '$eq', value: 'finance' },
          mode: 'lexical',
          mmr: false,
          mmrLambda: 0.5,
          neighbors: 0,
          minScore: 0,
          rerank: false,
          fusion: 'adaptive',
        },
        principals: ['user:a'],
      },
    ]);
  });

  it('packs the hits within the budget and passes on a degraded answer', async () => {
    const { search } = recordingSearch();
    const request = retrieveContextSchema.parse({ question: 'q', tokenBudget: 64 });
    const context = await contextService(search).retrieve(toTenantId('t1'), request);
    expect(context.hits.map((h) => h.chunkIndex)).toEqual([0, 1]);
    expect(context).toMatchObject({
      tokenBudget: 64,
      degraded: true,
      degradedReason: 'vector_search_unavailable',
    });
    expect(context.passages.map((p) => p.citation)).toEqual([1]);
  });

  it('searches a follow-up with the topic of the earlier user turns, and says so', async () => {
    const { search, asked } = recordingSearch();
    const context = await contextService(search).retrieve(
      toTenantId('t1'),
      retrieveContextSchema.parse({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'How does the query service embed a question?' },
          { role: 'assistant', content: 'With the same model as the chunks.' },
          { role: 'user', content: 'Which model does it use?' },
          { role: 'assistant', content: 'all-MiniLM-L6-v2.' },
          { role: 'user', content: 'and how is it cached?' },
        ],
      }),
    );
    expect(context).toMatchObject({
      queryStrategy: 'history_rule',
      standaloneQuery: 'how is it cached? (query service embed question)',
    });
    expect(asked[0]!.request.query).toBe('how is it cached? (query service embed question)');
    const alone = await contextService(search).retrieve(
      toTenantId('t1'),
      retrieveContextSchema.parse({ question: 'and how is it cached?' }),
    );
    expect(alone).toMatchObject({
      queryStrategy: 'standalone',
      standaloneQuery: 'and how is it cached?',
    });
  });

  it('refuses a request with neither a question nor a user message', () => {
    expect(
      retrieveContextSchema.safeParse({ messages: [{ role: 'assistant', content: 'hi' }] }).success,
    ).toBe(false);
  });

  describe('rerank', () => {
    const ask = async (body: Record<string, unknown>, reranking: string[]) => {
      const { search, asked } = recordingSearch();
      const defaults = rerankDefaults(reranking);
      const context = await contextService(search, defaults).retrieve(
        toTenantId('t1'),
        retrieveContextSchema.parse({ question: 'q', ...body }),
      );
      return { rerank: asked[0]!.request.rerank, settingsRead: defaults.asked, context };
    };

    it('follows the knowledge bases named when the call does not say', async () => {
      expect(await ask({ knowledgeBaseIds: ['plain', 'legal'] }, ['legal'])).toMatchObject({
        rerank: true,
        settingsRead: [['plain', 'legal']],
      });
      expect((await ask({ knowledgeBaseIds: ['plain'] }, ['legal'])).rerank).toBe(false);
    });

    it('does what the call says, without reading the settings', async () => {
      expect(await ask({ knowledgeBaseIds: ['legal'], rerank: false }, ['legal'])).toMatchObject({
        rerank: false,
        settingsRead: [],
      });
      expect(await ask({ knowledgeBaseIds: ['plain'], rerank: true }, [])).toMatchObject({
        rerank: true,
        settingsRead: [],
      });
    });

    it('reports what the search did with it', async () => {
      expect((await ask({}, [])).context.rerank).toBe('off');
    });
  });
});
