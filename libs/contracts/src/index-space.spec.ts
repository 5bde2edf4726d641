import {
  isIndexSpace,
  pipelineSpace,
  tenantOfSpace,
  tenantSpace,
  toIndexSpace,
} from './index-space';
import { toTenantId } from './tenancy';

describe('index spaces', () => {
  const acme = toTenantId('acme');

  it("names the default pipeline's space like the tenant and any other <tenant>~<key>", () => {
    expect(tenantSpace(acme)).toBe('acme');
    expect(pipelineSpace(acme, '0123456789ab')).toBe('acme~0123456789ab');
    expect(tenantOfSpace(pipelineSpace(acme, '0123456789ab'))).toBe('acme');
    expect(tenantOfSpace(tenantSpace(acme))).toBe('acme');
  });

  it('accepts what pipelines produce and refuses anything else', () => {
    expect(toIndexSpace('acme~0123456789ab')).toBe('acme~0123456789ab');
    expect(isIndexSpace('acme')).toBe(true);
    for (const bad of ['', 'Acme', 'acme~', 'acme~a~b', '~abc', 'acme~ABC', 42, undefined]) {
      expect(isIndexSpace(bad)).toBe(false);
    }
    expect(() => toIndexSpace('acme~a~b')).toThrow('invalid index space "acme~a~b"');
    expect(() => pipelineSpace(acme, 'not a key')).toThrow('invalid index space');
  });
});
