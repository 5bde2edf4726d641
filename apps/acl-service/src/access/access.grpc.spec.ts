import { credentials, status } from '@grpc/grpc-js';
import { type Caller, mintToken, TokenVerifier } from '@kb/auth';
import { aclv1 } from '@kb/contracts';
import { callWithToken, startGrpcOnLoopback } from '@kb/grpc';
import { ACCESS_POLICY, TOKEN_VERIFIER } from '@kb/http';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { PolicyService } from '../policy/policy.service';
import { AccessGrpcController } from './access.grpc';
import { AclAccessPolicy } from './acl-access.policy';

const SECRET = 'a-test-secret-of-at-least-thirty-two-chars';

/** The policy as the handlers see it: editors may write documents, nothing else is granted. */
const policy = {
  checks: 0,
  async check(caller: Caller, action: string, resource: string): Promise<boolean> {
    this.checks++;
    return resource === 'documents' && (action === 'read' || caller.roles.includes('editor'));
  },
  async expand(caller: Caller) {
    return {
      tenantId: caller.tenantId,
      userId: caller.userId,
      principals: [`u:${caller.userId}`, 't:*'],
      documentActions: ['read' as const],
      policyVersion: 7,
      validUntil: '2026-12-01T00:00:00.000Z',
    };
  },
};

/** The client's calls as promises, with the bearer token in the metadata. */
function caller(client: aclv1.AccessControlClient, token: string) {
  return {
    check: (request: aclv1.CheckRequest) =>
      callWithToken<aclv1.CheckRequest, aclv1.CheckResponse>(client, client.check, request, token),
    batchCheck: (request: aclv1.BatchCheckRequest) =>
      callWithToken<aclv1.BatchCheckRequest, aclv1.BatchCheckResponse>(
        client,
        client.batchCheck,
        request,
        token,
      ),
    expand: (request: aclv1.ExpandPrincipalsRequest) =>
      callWithToken<aclv1.ExpandPrincipalsRequest, aclv1.ExpandPrincipalsResponse>(
        client,
        client.expandPrincipals,
        request,
        token,
      ),
  };
}

describe('kb.v1.AccessControl over the Nest gRPC transport', () => {
  let app: INestApplication;
  let client: aclv1.AccessControlClient;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [AccessGrpcController],
      providers: [
        { provide: PolicyService, useValue: policy },
        { provide: TOKEN_VERIFIER, useValue: new TokenVerifier({ secret: SECRET }) },
        { provide: ACCESS_POLICY, useClass: AclAccessPolicy },
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    const address = await startGrpcOnLoopback(app, {
      'kb.v1.AccessControl': aclv1.AccessControlService,
    });
    client = new aclv1.AccessControlClient(address, credentials.createInsecure());
  });
  afterAll(async () => {
    client.close();
    await app.close();
  });

  it('checks, batch-checks and expands for the caller of the token', async () => {
    const editor = caller(
      client,
      await mintToken({ tenant: 't1', user: 'ed', roles: ['editor'] }, SECRET),
    );
    await expect(editor.check({ action: 'write', resource: 'documents' })).resolves.toEqual({
      allowed: true,
    });
    await expect(
      editor.batchCheck({
        checks: [
          { action: 'write', resource: 'documents' },
          { action: 'admin', resource: 'acl' },
        ],
      }),
    ).resolves.toEqual({ results: [{ allowed: true }, { allowed: false }] });
    await expect(editor.expand({})).resolves.toEqual({
      tenantId: 't1',
      userId: 'ed',
      principals: ['u:ed', 't:*'],
      documentActions: ['read'],
      policyVersion: 7,
      validUntil: '2026-12-01T00:00:00.000Z',
    });
  });

  it('answers at most 100 checks of a batch', async () => {
    const viewer = caller(client, await mintToken({ tenant: 't1', user: 'vi' }, SECRET));
    const checks = Array.from({ length: 150 }, () => ({ action: 'read', resource: 'documents' }));
    const { results } = await viewer.batchCheck({ checks });
    expect(results).toHaveLength(100);
  });

  it('refuses a call without a valid token with UNAUTHENTICATED, before any check', async () => {
    policy.checks = 0;
    const anonymous = caller(client, 'not.a.token');
    await expect(anonymous.check({ action: 'read', resource: 'documents' })).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
      details: 'invalid token (malformed header)',
    });
    expect(policy.checks).toBe(0);
  });
});
