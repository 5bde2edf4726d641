import { KbClient, type KbEndpoints, localToken } from '@kb/kb-cli/api';

/** Documents are shared with one of these groups each; the benchmark's reader is in most of them. */
export const TEAMS = 24;
const READER_GROUPS = Array.from({ length: 17 }, (_, i) => `team-${i}`);

/** The benchmark's reader: user, 17 groups, 2 roles and the tenant, 21 principals in all. */
export function readerToken(tenant: string): Promise<string> {
  return localToken({
    tenant,
    user: 'bench-reader',
    roles: ['viewer', 'analyst'],
    groups: READER_GROUPS,
  });
}

/** The benchmark's two callers of a tenant: the admin (no ACL filter) and the reader. */
export async function callersOf(
  options: Omit<KbEndpoints, 'token'>,
  tenant: string,
): Promise<{ admin: KbClient; reader: KbClient }> {
  // The admin ingests and searches unfiltered (ACL off); the reader has a realistic principal set:
  // user, 17 groups, 2 roles and the tenant, 21 in all, and sees documents of 17 of 24 teams.
  return {
    admin: new KbClient({
      ...options,
      token: await localToken({ tenant, user: 'bench-admin', roles: ['admin'] }),
    }),
    reader: new KbClient({ ...options, token: await readerToken(tenant) }),
  };
}
