/** A tenant id, validated at the edge. Repositories take it as a required argument. */
export type TenantId = string & { readonly __brand: 'TenantId' };

const TENANT_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export function isTenantId(value: unknown): value is TenantId {
  return typeof value === 'string' && TENANT_PATTERN.test(value);
}

export function toTenantId(value: string): TenantId {
  if (!isTenantId(value)) {
    throw new Error(`invalid tenant id "${value}": expected ${TENANT_PATTERN.source}`);
  }
  return value;
}
