import { AuthorizationService, type CheckRequest } from './authorization.service';

const request = (subjectTenant: string, resourceTenant: string): CheckRequest => ({
  subject: { tenantId: subjectTenant, userId: 'alice' },
  action: 'read',
  resource: { tenantId: resourceTenant, type: 'document', id: 'd1' },
});

describe('AuthorizationService (tenant-only placeholder policy)', () => {
  const service = new AuthorizationService();

  it('allows a subject inside its own tenant', () => {
    expect(service.check(request('t1', 't1'))).toEqual({ allowed: true, reason: 'same_tenant' });
  });

  it('denies any access across tenants', () => {
    expect(service.check(request('t1', 't2'))).toEqual({ allowed: false, reason: 'cross_tenant' });
  });
});
