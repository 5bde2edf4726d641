/**
 * Where query-service caches a tenant's search results in Redis. The entries hold chunk text, so
 * indexing-service removes a tenant's entries when one of its documents is deleted (a generation
 * bump alone only stops them being served: docs/adr/0019). Tenant ids contain no glob characters,
 * so the prefix followed by `*` is a safe SCAN pattern. v3: hits carry document fields, page and
 * heading path (entries cached before would lack them).
 */
export const searchCachePrefix = (tenantId: string): string => `kb:search:v3:${tenantId}:`;

/**
 * A tenant's index generation as mirrored into Redis beside its cached results, so a cache hit
 * reads the generation and the entry in one MGET instead of a Postgres read and a GET
 * (docs/adr/0029). Postgres stays the source: indexing-service raises the mirror after each bump;
 * query-service raises it from a Postgres read when the key is absent. The key expires after
 * `SEARCH_GENERATION_TTL_MS`, which bounds how long a mirror can lag Postgres when a raise was
 * lost (a failed Redis write, a Redis restored from a snapshot). Not under `searchCachePrefix`:
 * purging a tenant's entries leaves it (removing it would be harmless too).
 */
export const searchGenerationKey = (tenantId: string): string => `kb:search-gen:v1:${tenantId}`;

/** How long a mirrored generation is trusted without being raised again. */
export const SEARCH_GENERATION_TTL_MS = 5_000;

/**
 * Raises KEYS[1] to the generation ARGV[1] (never lowers it: a raise from an older read, or from
 * a replica whose bump came earlier, arriving late changes nothing) and sets its expiry to
 * ARGV[2] ms when it raised. Returns the generation the key holds afterwards.
 */
export const RAISE_SEARCH_GENERATION_LUA = `
local held = tonumber(redis.call('GET', KEYS[1]))
local wanted = tonumber(ARGV[1])
if held and held >= wanted then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return wanted`;
