import type { Caller } from '@kb/auth';
import { toTenantId } from '@kb/contracts';

import { DocumentServiceError } from '../documents/documents.errors';
import { ContextRerankDefaults } from './context-rerank.defaults';

const caller = { tenantId: 't1', userId: 'alice', token: 'jwt' } as unknown as Caller;
const tenant = toTenantId('t1');

/** FAKE document-service: knowledge bases by id with their `contextRerank`; others 404. */
function documents(settings: Record<string, boolean>) {
  const reads: string[] = [];
  return {
    reads,
    knowledgeBase: async (_caller: Caller, id: string) => {
      reads.push(id);
      if (!(id in settings)) throw DocumentServiceError.relayed(404, 'not_found', `no ${id}`);
      return { id, contextRerank: settings[id]! } as never;
    },
  };
}

describe('ContextRerankDefaults', () => {
  it('reranks when any knowledge base named has contextRerank', async () => {
    const defaults = new ContextRerankDefaults(documents({ plain: false, legal: true }));
    expect(await defaults.rerankFor(tenant, ['plain', 'legal'], caller)).toBe(true);
    expect(await defaults.rerankFor(tenant, ['plain'], caller)).toBe(false);
  });

  it('does not rerank over all knowledge bases, without a caller, or for one it cannot read', async () => {
    const client = documents({ legal: true });
    const defaults = new ContextRerankDefaults(client);
    expect(await defaults.rerankFor(tenant, [], caller)).toBe(false);
    expect(await defaults.rerankFor(tenant, ['legal'], undefined)).toBe(false);
    expect(await defaults.rerankFor(tenant, ['hidden'], caller)).toBe(false);
    expect(client.reads).toEqual(['hidden']);
  });

  it('reads a setting once and serves it again', async () => {
    const client = documents({ legal: true });
    const defaults = new ContextRerankDefaults(client);
    await defaults.rerankFor(tenant, ['legal'], caller);
    await defaults.rerankFor(tenant, ['legal'], caller);
    expect(client.reads).toEqual(['legal']);
  });
});
