import { type Adapter, newEnforcer } from 'casbin';
import PostgresAdapter from 'casbin-pg-adapter';
import type { Pool } from 'pg';

import { addBuiltIns, type EnforcerSource } from './policy.service';
import { newModel } from './rbac.model';

/**
 * Enforcers over the rules stored in the pool's schema (table `casbin`, from our migrations),
 * with the built-in policies added in memory.
 */
export async function enforcerSource(pool: Pool): Promise<EnforcerSource> {
  const adapter = await PostgresAdapter.newAdapter({
    migrate: false, // the table comes from our migrations
    dbClient: async (exec) => {
      const client = await pool.connect();
      try {
        return await exec(client);
      } finally {
        client.release();
      }
    },
  });
  return enforcerSourceOver(adapter);
}

/** Enforcers over the rules an adapter holds, with the built-in policies added in memory. */
export async function enforcerSourceOver(adapter: Adapter): Promise<EnforcerSource> {
  const build = async () => {
    const enforcer = await newEnforcer(newModel(), adapter);
    addBuiltIns(enforcer);
    return enforcer;
  };
  return { enforcer: await build(), build };
}
