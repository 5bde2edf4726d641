import { isTenantId, type TenantId } from './tenancy';

/**
 * An index space: where one pipeline's chunks of a tenant live, as a vector namespace and a
 * lexical-index key (docs/adr/0012). The deployment's default pipeline keeps the tenant's own
 * space, named like the tenant; any other pipeline gets `<tenant>~<pipeline key>`. Branded so a
 * port argument says which of the two strings it wants: a tenant id is not a space until it is
 * made one with `tenantSpace`.
 */
export type IndexSpace = string & { readonly __brand: 'IndexSpace' };

const SEPARATOR = '~';
const KEY_PATTERN = /^[a-z0-9]{1,64}$/;

export function isIndexSpace(value: unknown): value is IndexSpace {
  if (typeof value !== 'string') return false;
  const [tenant, key, ...rest] = value.split(SEPARATOR);
  return isTenantId(tenant) && (key === undefined || KEY_PATTERN.test(key)) && rest.length === 0;
}

/** Validates a space read from an event or a row (it was built by `pipelineOf` upstream). */
export function toIndexSpace(value: string): IndexSpace {
  if (!isIndexSpace(value)) {
    throw new Error(`invalid index space "${value}": expected <tenant> or <tenant>~<key>`);
  }
  return value;
}

/** The tenant's own space: the deployment's default pipeline. */
export const tenantSpace = (tenantId: TenantId): IndexSpace => tenantId as string as IndexSpace;

/** The space of a pipeline other than the deployment's default one. */
export const pipelineSpace = (tenantId: TenantId, pipelineKey: string): IndexSpace =>
  toIndexSpace(`${tenantId}${SEPARATOR}${pipelineKey}`);

/** The tenant an index space belongs to. */
export const tenantOfSpace = (space: IndexSpace): TenantId =>
  space.split(SEPARATOR)[0]! as TenantId;
