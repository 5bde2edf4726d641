import { randomUUID } from 'node:crypto';

import { Client } from 'pg';

import { createPool } from '../src';

/**
 * Real Postgres. A server restart (or an administrator) closes idle connections under a pool;
 * pg then emits 'error' on the pool, and an 'error' event nobody listens to kills the process.
 */
describe('createPool', () => {
  const url = process.env.DATABASE_URL!;

  it('survives the server closing its idle connections, and serves the next query', async () => {
    const name = `pool_test_${randomUUID().slice(0, 8)}`;
    const pool = createPool({ url, schema: 'public', applicationName: name, maxConnections: 2 });
    const admin = new Client({ connectionString: url });
    await admin.connect();
    try {
      await pool.query('select 1');
      expect(pool.idleCount).toBe(1);
      const { rowCount } = await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
        [name],
      );
      expect(rowCount).toBe(1);
      // The pool drops the dead client once its 'error' is handled.
      const deadline = Date.now() + 5_000;
      while (pool.totalCount > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(pool.totalCount).toBe(0);
      const { rows } = await pool.query<{ ok: number }>('select 1 as ok');
      expect(rows[0]!.ok).toBe(1);
    } finally {
      await admin.end();
      await pool.end();
    }
  });

  it('survives losing a connection that is checked out, and serves the next query', async () => {
    const name = `pool_test_${randomUUID().slice(0, 8)}`;
    const pool = createPool({ url, schema: 'public', applicationName: name, maxConnections: 2 });
    const admin = new Client({ connectionString: url });
    await admin.connect();
    try {
      const client = await pool.connect();
      await client.query('select 1');
      await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
        [name],
      );
      // The client hears of it as an 'error' event: without the pool's listener on every
      // client that event is unhandled and ends the process (here: fails the test).
      await new Promise((resolve) => setTimeout(resolve, 500));
      await expect(client.query('select 1')).rejects.toThrow();
      client.release(true);
      const { rows } = await pool.query<{ ok: number }>('select 1 as ok');
      expect(rows[0]!.ok).toBe(1);
    } finally {
      await admin.end();
      await pool.end();
    }
  });
});
