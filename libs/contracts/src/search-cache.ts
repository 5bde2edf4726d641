/**
 * Where query-service caches a tenant's search results in Redis. The entries hold chunk text, so
 * indexing-service removes a tenant's entries when one of its documents is deleted (a generation
 * bump alone only stops them being served: docs/adr/0019). Tenant ids contain no glob characters,
 * so the prefix followed by `*` is a safe SCAN pattern. v3: hits carry document fields, page and
 * heading path (entries cached before would lack them).
 */
export const searchCachePrefix = (tenantId: string): string => `kb:search:v3:${tenantId}:`;
