import { type IndexSpace, type InlineOrRef, isIndexSpace, tenantOfSpace } from '@kb/contracts';

import { PermanentError } from './errors';

/**
 * An index space named by an event, checked to be the event's tenant's. A consumer writes into
 * the spaces and reads the claim checks an event names; an event that names another tenant's (a
 * bug upstream, or a forged message on the topic) is dead-lettered at once with `reason`, before
 * anything is read or written.
 */
export function spaceOfTenant(tenantId: string, value: string, reason: string): IndexSpace {
  if (!isIndexSpace(value) || tenantOfSpace(value) !== tenantId) {
    throw new PermanentError(reason, `index space "${value}" is not one of tenant ${tenantId}'s`);
  }
  return value;
}

/**
 * A claim-check key named by an event, checked to lie under one of the tenant's prefixes:
 * `derived/<tenant>/` for parse and embedding output, `blobs/<tenant>/` for originals (and the
 * shared `blobs/sha256/` of originals stored before per-tenant keys).
 */
export function keyOfTenant(key: string, prefixes: string[], reason: string): string {
  if (key.includes('..') || !prefixes.some((prefix) => key.startsWith(prefix))) {
    throw new PermanentError(reason, `object key "${key}" is outside the event's tenant`);
  }
  return key;
}

/** A claim an event names: carried inline, or a key under the tenant's derived prefix. */
export function claimOfTenant<T>(
  claim: InlineOrRef<T>,
  tenantId: string,
  reason: string,
): InlineOrRef<T> {
  if (!('inline' in claim)) keyOfTenant(claim.key, [derivedPrefix(tenantId)], reason);
  return claim;
}

/** Where a tenant's derived objects (parse output, embeddings) live. */
export const derivedPrefix = (tenantId: string): string => `derived/${tenantId}/`;

/** Where a tenant's originals live, the shared pre-2026-11-23 prefix included. */
export const originalPrefixes = (tenantId: string): string[] => [
  `blobs/${tenantId}/`,
  'blobs/sha256/',
];
