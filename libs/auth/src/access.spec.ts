import { Server, ServerCredentials } from '@grpc/grpc-js';
import { aclv1, toTenantId } from '@kb/contracts';

import { AccessResolver } from './access';
import type { Caller } from './caller';

/** A stand-in acl-service answering ExpandPrincipals with `validUntil()`; counts its calls. */
async function fakeAcl(validUntil: () => string) {
  let calls = 0;
  const server = new Server();
  server.addService(aclv1.AccessControlService, {
    check: () => undefined,
    batchCheck: () => undefined,
    expandPrincipals: (
      _call: unknown,
      callback: (error: null, answer: aclv1.ExpandPrincipalsResponse) => void,
    ) => {
      calls += 1;
      callback(null, {
        tenantId: 't1',
        userId: 'bob',
        principals: ['u:bob', 't:*', 'x:grant1'],
        documentActions: ['read'],
        policyVersion: 1,
        validUntil: validUntil(),
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return { address: `127.0.0.1:${port}`, calls: () => calls, close: () => server.forceShutdown() };
}

const bob: Caller = {
  tenantId: toTenantId('t1'),
  userId: 'bob',
  roles: [],
  groups: [],
  token: 'b',
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('AccessResolver', () => {
  it('keeps an answer no longer than the earliest end of the grants behind it', async () => {
    const acl = await fakeAcl(() => new Date(Date.now() + 300).toISOString());
    const resolver = new AccessResolver({ address: acl.address, ttlMs: 60_000 });
    try {
      const first = await resolver.resolve(bob);
      expect(first.validUntil).toBeInstanceOf(Date);
      await resolver.resolve(bob);
      expect(acl.calls()).toBe(1);
      await sleep(400);
      await resolver.resolve(bob);
      expect(acl.calls()).toBe(2);
    } finally {
      resolver.close();
      acl.close();
    }
  });

  it('keeps an answer for ttlMs when nothing behind it ends', async () => {
    const acl = await fakeAcl(() => '');
    const resolver = new AccessResolver({ address: acl.address, ttlMs: 60_000 });
    try {
      expect((await resolver.resolve(bob)).validUntil).toBeUndefined();
      await sleep(400);
      await resolver.resolve(bob);
      expect(acl.calls()).toBe(1);
    } finally {
      resolver.close();
      acl.close();
    }
  });
});
