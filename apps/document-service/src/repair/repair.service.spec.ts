import type { Access } from '@kb/auth';
import { toTenantId } from '@kb/contracts';

import type { DocumentRecord } from '../documents/document.model';
import type { DocumentMembershipService } from '../documents/document-membership.service';
import type { TransactionRunner, Trx } from '../platform/transaction.runner';
import type { RepairRepository } from './repair.repository';
import { RepairService } from './repair.service';

const tenant = toTenantId('acme');
const access = (isAdmin: boolean): Access => ({
  tenantId: tenant,
  userId: 'ops',
  principals: [],
  documentActions: new Set(),
  isAdmin,
});

/** A repair over `count` documents, pages read from a sorted list, each re-drive recorded. */
function repairOver(count: number) {
  const ids = Array.from({ length: count }, (_, i) => `doc-${String(i).padStart(5, '0')}`);
  const redriven: string[] = [];
  let wakes = 0;
  const repository = {
    page: async (_trx: Trx, tenantId: string, after: string | undefined, limit: number) =>
      ids
        .filter((id) => tenantId === tenant && (after === undefined || id > after))
        .slice(0, limit)
        .map((id) => ({ id, tenantId }) as unknown as DocumentRecord),
  } as unknown as RepairRepository;
  const membership = {
    sendThroughPipelines: async (_trx: Trx, document: DocumentRecord) => {
      redriven.push(document.id);
    },
  } as unknown as DocumentMembershipService;
  const transactions = {
    run: <T>(work: (trx: Trx) => Promise<T>) => work({} as Trx),
  } as unknown as TransactionRunner;
  const service = new RepairService(transactions, repository, membership, {
    wake: () => void wakes++,
  });
  return { service, redriven, ids, wakes: () => wakes };
}

describe('RepairService', () => {
  it('sends every document of the tenant through its pipelines once, a page at a time', async () => {
    const { service, redriven, ids, wakes } = repairOver(1_234);
    const result = await service.repair(tenant, access(true));
    expect(result.redriven).toBe(1_234);
    expect(redriven).toEqual(ids);
    expect(wakes()).toBe(3); // 500 + 500 + 234
  });

  it('refuses a caller who is not a tenant admin, before reading anything', async () => {
    const { service, redriven } = repairOver(3);
    await expect(service.repair(tenant, access(false))).rejects.toMatchObject({
      code: 'permission_denied',
    });
    expect(redriven).toEqual([]);
  });
});
