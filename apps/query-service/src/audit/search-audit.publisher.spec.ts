import { toTenantId } from '@kb/contracts';
import type { EventProducer, OutgoingEvent } from '@kb/kafka';

import { AUDIT_BATCH, AUDIT_FLUSH_MS, SearchAudit } from './search-audit.publisher';

/** Records the batches instead of sending them; `fail` makes the broker refuse them. */
function recordingProducer(fail = false) {
  const batches: OutgoingEvent<'kb.audit.v1'>[][] = [];
  const producer = {
    publishMany: async (events: OutgoingEvent<'kb.audit.v1'>[]) => {
      batches.push(events);
      if (fail) throw new Error('broker down');
    },
  } as unknown as EventProducer;
  return { producer, batches };
}

const tenant = toTenantId('t1');
const hit = (chunkIndex: number) => ({ documentId: 'd1', documentVersion: 2, chunkIndex });

describe('SearchAudit', () => {
  it('sends the searches of a short window in one batch', async () => {
    const { producer, batches } = recordingProducer();
    const audit = new SearchAudit(producer);
    audit.record(tenant, 'alice', 'search', 'q1', [hit(0), hit(1)]);
    audit.record(tenant, 'bob', 'retrieve_context', 'q2', []);
    expect(batches).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, AUDIT_FLUSH_MS * 4));
    expect(batches).toHaveLength(1);
    expect(batches[0]!.map((e) => [e.key, e.payload.action, e.payload.detail])).toEqual([
      ['alice', 'search', 'q1'],
      ['bob', 'retrieve_context', 'q2'],
    ]);
    expect(batches[0]![0]!.payload).toMatchObject({
      documentIds: ['d1'],
      chunks: ['d1#2#0', 'd1#2#1'],
    });
  });

  it('sends a full batch at once and the rest at shutdown', async () => {
    const { producer, batches } = recordingProducer();
    const audit = new SearchAudit(producer);
    for (let i = 0; i < AUDIT_BATCH + 3; i++) audit.record(tenant, 'alice', 'search', `q${i}`, []);
    expect(batches.map((b) => b.length)).toEqual([AUDIT_BATCH]);
    await audit.beforeApplicationShutdown();
    expect(batches.map((b) => b.length)).toEqual([AUDIT_BATCH, 3]);
  });

  it('never fails a search when the broker refuses a batch', async () => {
    const { producer, batches } = recordingProducer(true);
    const audit = new SearchAudit(producer);
    audit.record(tenant, 'alice', 'search', 'q', []);
    await expect(audit.flush()).resolves.toBeUndefined();
    expect(batches).toHaveLength(1);
  });
});
