import { Topics } from '@kb/contracts';

import { activityOf } from './usage.consumer';

const event = (
  tenantId: string,
  action: string,
  at: string,
  extra: { knowledgeBaseIds?: string[]; reranked?: boolean } = {},
) =>
  ({
    topic: Topics.audit,
    tenantId,
    payload: { actor: 'u', action, detail: '', documentIds: [], chunks: [], at, ...extra },
  }) as unknown as Parameters<typeof activityOf>[0][number];

describe('activityOf', () => {
  it('counts searches, context calls, reranks and uploads by tenant, knowledge base and UTC day', () => {
    const rows = activityOf([
      event('t1', 'search', '2026-11-27T10:00:00.000Z', { knowledgeBaseIds: ['a', 'b'] }),
      event('t1', 'search', '2026-11-27T23:59:59.000Z', { reranked: true }),
      event('t1', 'retrieve_context', '2026-11-28T00:00:01.000Z', { knowledgeBaseIds: ['a'] }),
      event('t1', 'document_uploaded', '2026-11-27T11:00:00.000Z', { knowledgeBaseIds: ['a'] }),
      event('t1', 'document_read', '2026-11-27T11:00:00.000Z'),
      event('t2', 'search', '2026-11-27T11:00:00.000Z'),
    ]);
    const row = (tenantId: string, kb: string, day: string) =>
      rows.find((r) => r.tenantId === tenantId && r.knowledgeBaseId === kb && r.day === day);
    // The tenant's row counts a search over two knowledge bases once.
    expect(row('t1', '', '2026-11-27')).toMatchObject({ searches: 2, reranks: 1, uploads: 1 });
    expect(row('t1', 'a', '2026-11-27')).toMatchObject({ searches: 1, uploads: 1 });
    expect(row('t1', 'b', '2026-11-27')).toMatchObject({ searches: 1, uploads: 0 });
    expect(row('t1', '', '2026-11-28')).toMatchObject({ searches: 0, contextCalls: 1 });
    expect(row('t2', '', '2026-11-27')).toMatchObject({ searches: 1 });
    expect(rows).toHaveLength(6);
  });
});
