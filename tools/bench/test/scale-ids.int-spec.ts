import { Pool } from 'pg';
import { z } from 'zod';

import { copyId } from '../src/bench/scale.sql';

describe("a scaled tenant's copy ids", () => {
  const pool = new Pool({ connectionString: process.env['DATABASE_URL'], max: 1 });
  afterAll(() => pool.end());

  it('are UUIDs the events accept, one per copy and source, the same on every build', async () => {
    const source = ['0b9c1a5e-4f7d-4c2a-9e31-6d5f0a8b7c21', '5e2d7f90-1a3b-4c5d-8e6f-7a8b9c0d1e2f'];
    const query = `SELECT ${copyId('g', 's.id')}::text AS id
                     FROM unnest($1::text[]) AS s(id) CROSS JOIN generate_series(1, 50) g`;
    const first = (await pool.query<{ id: string }>(query, [source])).rows.map((r) => r.id);
    const again = (await pool.query<{ id: string }>(query, [source])).rows.map((r) => r.id);

    expect(first).toHaveLength(100);
    expect(new Set(first).size).toBe(100);
    expect(again).toEqual(first);
    for (const id of first) expect(z.uuid().safeParse(id).success).toBe(true);
  });
});
