import { type Caller, mintToken, TokenVerifier } from '@kb/auth';
import {
  ACCESS_POLICY,
  FlexibleRateLimiter,
  RATE_LIMITER,
  TOKEN_VERIFIER,
  useRestDefaults,
} from '@kb/http';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { AclAccessPolicy } from '../access/acl-access.policy';
import { AuditController } from '../audit/audit.controller';
import { AuditRepository } from '../audit/audit.repository';
import { type PolicyChange, PolicyService } from '../policy/policy.service';
import { AdminController } from './admin.controller';

const SECRET = 'a-test-secret-of-at-least-thirty-two-chars';

/** Only `root` administers the tenant; changes are recorded. */
const policy = {
  changes: [] as PolicyChange[],
  async check(caller: Caller): Promise<boolean> {
    return caller.userId === 'root';
  },
  async describe(tenantId: string) {
    return { permissions: [], memberships: [], builtIn: [], version: 3, tenantId };
  },
  async change(_caller: Caller, change: PolicyChange): Promise<number> {
    this.changes.push(change);
    return 4;
  },
};
const audit = { query: jest.fn(async () => []) };

describe('acl-service REST authorization through @Authenticated({ permission })', () => {
  let app: INestApplication;
  let url: string;
  const verifier = new TokenVerifier({ secret: SECRET });
  const as = async (user: string) => ({
    authorization: `Bearer ${await mintToken({ tenant: 't1', user }, SECRET)}`,
    'content-type': 'application/json',
  });

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [AdminController, AuditController],
      providers: [
        { provide: PolicyService, useValue: policy },
        { provide: AuditRepository, useValue: audit },
        { provide: TOKEN_VERIFIER, useValue: verifier },
        { provide: ACCESS_POLICY, useClass: AclAccessPolicy },
        {
          provide: RATE_LIMITER,
          useValue: new FlexibleRateLimiter(
            { windowSeconds: 60, buckets: { admin: { principal: 5, tenant: 0 } } },
            null,
          ),
        },
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    useRestDefaults(app, verifier);
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });
  afterAll(() => app.close());

  it('serves a tenant admin', async () => {
    const described = await fetch(`${url}/v1/acl/policy`, { headers: await as('root') });
    expect(described.status).toBe(200);
    expect(await described.json()).toMatchObject({ version: 3, tenantId: 't1' });

    const assigned = await fetch(`${url}/v1/acl/role-assignments`, {
      method: 'POST',
      headers: await as('root'),
      body: JSON.stringify({ member: 'u:alice', role: 'editor' }),
    });
    expect(await assigned.json()).toEqual({ version: 4 });
    expect(policy.changes).toEqual([
      { kind: 'role_assigned', member: 'u:alice', target: 'r:editor' },
    ]);
  });

  it('answers 403 permission_denied to anyone else, before reading the body', async () => {
    const refused = await fetch(`${url}/v1/acl/role-assignments`, {
      method: 'POST',
      headers: await as('alice'),
      body: JSON.stringify({ nonsense: true }),
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      error: { code: 'permission_denied', message: 'admin on acl needs a tenant admin' },
    });

    const log = await fetch(`${url}/v1/audit?limit=5`, { headers: await as('alice') });
    expect(log.status).toBe(403);
    expect(await log.json()).toMatchObject({
      error: { message: 'read on audit needs a tenant admin' },
    });
    expect(audit.query).not.toHaveBeenCalled();
  });

  it('answers 401 without a token and 400 for a bad body of an admin', async () => {
    const anonymous = await fetch(`${url}/v1/acl/policy`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: { code: 'unauthenticated' } });

    const bad = await fetch(`${url}/v1/acl/role-assignments`, {
      method: 'POST',
      headers: await as('root'),
      body: JSON.stringify({ member: 'alice', role: 'editor' }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_argument' } });
  });

  it('answers 429 rate_limited with Retry-After once a caller spent the admin budget', async () => {
    // Counted before the permission check: refused callers spend their budget too.
    for (let i = 0; i < 5; i++) {
      const refused = await fetch(`${url}/v1/acl/policy`, { headers: await as('mallory') });
      expect(refused.status).toBe(403);
    }
    const limited = await fetch(`${url}/v1/audit?limit=5`, { headers: await as('mallory') });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await limited.json()).toEqual({
      error: {
        code: 'rate_limited',
        message: 'too many admin calls from this caller; retry later',
      },
    });
    // Budgets are per caller: the tenant admin is still served.
    expect((await fetch(`${url}/v1/acl/policy`, { headers: await as('root') })).status).toBe(200);
  });
});
