import { newEnforcer, StringAdapter } from 'casbin';

import { newModel } from '../policy/rbac.model';
import { EndingGrants } from './ending-grants';

const end = (member: string, target: string, ms: number) => ({
  tenantId: 't1',
  member,
  target,
  expiresAt: new Date(ms),
});

describe('EndingGrants', () => {
  it('drops each rule from memory once its end is reached, and only then', async () => {
    const enforcer = await newEnforcer(
      newModel(),
      new StringAdapter('g, u:a, r:x, t1\ng, u:b, r:x, t1\ng, u:c, r:x, t1'),
    );
    const ending = new EndingGrants([end('u:a', 'r:x', 1000), end('u:b', 'r:x', 2000)]);
    await ending.dropDue(enforcer, 999);
    expect(await enforcer.getFilteredGroupingPolicy(2, 't1')).toHaveLength(3);
    await ending.dropDue(enforcer, 1000);
    expect((await enforcer.getFilteredGroupingPolicy(2, 't1')).map(([m]) => m)).toEqual([
      'u:b',
      'u:c',
    ]);
    await ending.dropDue(enforcer, 5000);
    expect((await enforcer.getFilteredGroupingPolicy(2, 't1')).map(([m]) => m)).toEqual(['u:c']);
  });

  it('answers the earliest future end among the grants a caller holds', () => {
    const ending = new EndingGrants([
      end('u:a', 'r:x', 3000),
      end('g:eng', 'r:y', 2000),
      end('u:z', 'r:x', 1000),
    ]);
    expect(ending.validUntil('t1', ['u:a', 'g:eng'], 0)).toEqual(new Date(2000));
    expect(ending.validUntil('t1', ['u:a', 'g:eng'], 2000)).toEqual(new Date(3000));
    expect(ending.validUntil('t1', ['u:q'], 0)).toBeUndefined();
    expect(ending.validUntil('t2', ['u:a'], 0)).toBeUndefined();
  });
});
