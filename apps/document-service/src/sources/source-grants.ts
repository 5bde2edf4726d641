import { z } from 'zod';

/**
 * What an operator lets each tenant's S3 sources read (docs/adr/0026, security review N1). The
 * service reads sources with its own S3 identity, which reaches every tenant's source bucket and
 * whatever else that identity can read, so nothing a tenant names is readable unless it is granted
 * here: a bucket, and a key prefix inside it ("" for the whole bucket).
 *
 * `SOURCE_ALLOWLIST` holds them as JSON, tenant id to grants:
 * `{"acme":[{"bucket":"acme-handbook","prefix":"public/"}]}`. The default is `{}`: no source
 * of any tenant may read anything.
 */
export const sourceGrantSchema = z
  .object({
    bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name'),
    prefix: z.string().max(1000).default(''),
  })
  .strict();
export type SourceGrant = z.infer<typeof sourceGrantSchema>;

export const sourceAllowlistSchema = z.record(z.string().min(1), z.array(sourceGrantSchema));
export type SourceAllowlist = z.infer<typeof sourceAllowlistSchema>;

/** Reads `SOURCE_ALLOWLIST`; a value that is not valid JSON fails the config at start-up. */
export const sourceAllowlistSetting = z
  .string()
  .default('{}')
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'SOURCE_ALLOWLIST is not valid JSON' });
      return z.NEVER;
    }
  })
  .pipe(sourceAllowlistSchema);

/**
 * Whether a tenant's source may read `bucket` under `prefix`: some grant of the tenant names the
 * bucket, and the source's prefix lies inside the grant's. The documents bucket (every tenant's
 * originals) is never readable, whatever the list says.
 */
export function isGranted(
  allowlist: SourceAllowlist,
  documentsBucket: string,
  tenantId: string,
  bucket: string,
  prefix: string,
): boolean {
  if (bucket === documentsBucket) return false;
  return (allowlist[tenantId] ?? []).some(
    (grant) => grant.bucket === bucket && prefix.startsWith(grant.prefix),
  );
}
