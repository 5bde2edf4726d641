import { toTenantId } from '@kb/contracts';

import { collapseStatusChanges, type TenantStatusChange } from './status-changes';

const tenant = toTenantId('t1');
const at = (second: number) => new Date(Date.UTC(2026, 10, 25, 10, 0, second));
const change = (
  status: TenantStatusChange['status'],
  second: number,
  overrides: Partial<TenantStatusChange> = {},
): TenantStatusChange => ({
  tenantId: tenant,
  documentId: 'd1',
  version: 1,
  status,
  at: at(second),
  ...overrides,
});

describe('collapseStatusChanges', () => {
  it('keeps the last status of a run and the time of every stage on the way', () => {
    expect(
      collapseStatusChanges([
        change('parsing', 1),
        change('embedding', 2),
        change('indexing', 3),
        change('indexed', 4, { chunkCount: 3 }),
      ]),
    ).toEqual([
      {
        ...change('indexed', 4, { chunkCount: 3 }),
        stageTimes: {
          parsing: at(1).toISOString(),
          embedding: at(2).toISOString(),
          indexing: at(3).toISOString(),
          indexed: at(4).toISOString(),
        },
      },
    ]);
  });

  it('drops what one change at a time would drop: late, repeated and after a final status', () => {
    const [collapsed, ...rest] = collapseStatusChanges([
      change('embedding', 2),
      change('parsing', 1), // late
      change('embedding', 3), // repeated
      change('failed', 4, { reason: 'parse_error', detail: 'bad pdf' }),
      change('indexed', 5), // after a final status
    ]);
    expect(rest).toEqual([]);
    expect(collapsed).toMatchObject({ status: 'failed', reason: 'parse_error', at: at(4) });
    expect(collapsed!.stageTimes).toEqual({
      embedding: at(2).toISOString(),
      failed: at(4).toISOString(),
    });
  });

  it('keeps the chunk count of an earlier change when a later one has none', () => {
    const [collapsed] = collapseStatusChanges([
      change('indexing', 1, { chunkCount: 7 }),
      change('indexed', 2),
    ]);
    expect(collapsed).toMatchObject({ status: 'indexed', chunkCount: 7 });
  });

  it('keeps tenants, documents and versions apart, in first-seen order', () => {
    const collapsed = collapseStatusChanges([
      change('parsing', 1),
      change('parsing', 1, { version: 2 }),
      change('embedding', 2, { documentId: 'd2' }),
      change('indexed', 3, { tenantId: toTenantId('t2') }),
      change('embedding', 4),
    ]);
    expect(collapsed.map((c) => [c.tenantId, c.documentId, c.version, c.status])).toEqual([
      ['t1', 'd1', 1, 'embedding'],
      ['t1', 'd1', 2, 'parsing'],
      ['t1', 'd2', 1, 'embedding'],
      ['t2', 'd1', 1, 'indexed'],
    ]);
  });
});
