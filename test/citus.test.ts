import { describe, expect, inject, it } from 'vitest';
import { connect, type Sql } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { distribute, DistributionPlanError, DISTRIBUTION_PLAN } from '../db/distribute.js';
import { createTestDatabase } from './harness.js';

/** The foreign keys of the public schema, as their definitions. */
async function foreignKeys(sql: Sql): Promise<string[]> {
  const rows = await sql<{ d: string }[]>`
    SELECT conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) AS d FROM pg_constraint
    WHERE contype = 'f' AND connamespace = 'public'::regnamespace ORDER BY 1`;
  return rows.map((r) => r.d);
}

if (!inject('citus')) {
  it.skip('Citus: skipped, set CITUS_URL to a coordinator with workers to run', () => {});

  it('distribute() on plain Postgres does nothing', async () => {
    const db = await createTestDatabase();
    const sql = connect(db.url, { max: 1 });
    try {
      await migrate(sql);
      expect(await distribute(sql)).toEqual({ citus: false, reference: [], distributed: [], foreignKeys: [], propagateSet: false });
    } finally {
      await sql.end();
      await db.drop();
    }
  });
} else {
  describe('Citus (CITUS_URL)', () => {
    it('places every table as DISTRIBUTION_PLAN says, colocated, on every worker; keeps the foreign keys; a second distribute() does nothing', async () => {
      const db = await createTestDatabase();
      const sql = connect(db.url, { max: 1 });
      try {
        await migrate(sql, { distribute: false });
        const before = await foreignKeys(sql);
        expect(before.length).toBeGreaterThan(10);

        // A table the plan does not name stops it, and nothing is placed.
        await sql`CREATE TABLE surprise (id int)`;
        const err = await distribute(sql).catch((e) => e);
        expect(err).toBeInstanceOf(DistributionPlanError);
        expect(err.tables).toEqual(['surprise']);
        expect(err.message).toMatch(/surprise/);
        expect(await sql`SELECT 1 FROM pg_dist_partition`).toHaveLength(0);
        await sql`DROP TABLE surprise`;

        const first = await distribute(sql);
        expect(first.citus).toBe(true);
        expect(first.reference).toEqual(DISTRIBUTION_PLAN.reference);
        expect(first.distributed).toEqual(DISTRIBUTION_PLAN.distributed.map((d) => d.table));
        expect(first.propagateSet).toBe(true);

        const placed = new Map((await sql<{ table: string; method: string; column: string | null; colocation: number }[]>`
          SELECT logicalrelid::regclass::text AS table, partmethod AS method,
                 column_to_column_name(logicalrelid, partkey) AS column, colocationid AS colocation
          FROM pg_dist_partition`).map((r) => [r.table, r]));
        for (const t of DISTRIBUTION_PLAN.reference) expect(placed.get(t)?.method, t).toBe('n');
        for (const d of DISTRIBUTION_PLAN.distributed) {
          const p = placed.get(d.table);
          expect({ table: d.table, method: p?.method, column: p?.column }).toEqual({ table: d.table, method: 'h', column: d.column });
          if (d.colocateWith !== 'none') expect(p?.colocation, d.table).toBe(placed.get(d.colocateWith)?.colocation);
        }
        expect(placed.get('sessions')?.colocation).not.toBe(placed.get('contents')?.colocation);
        // Everything else stays a plain table on the coordinator.
        const tables = (await sql<{ t: string }[]>`
          SELECT relname AS t FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'`).map((r) => r.t);
        const local = tables.filter((t) => !placed.has(t)).sort();
        expect(local).toContain('tokens');
        expect(local).toContain('schema_migrations');
        for (const t of local) expect(t).toMatch(/^(tokens|schema_migrations|bridge_opencode_.+)$/);
        expect(placed.size).toBe(tables.length - local.length);

        // Shards of the session group on every worker.
        const workers = (await sql<{ port: number }[]>`SELECT node_port AS port FROM citus_get_active_worker_nodes() ORDER BY 1`).map((r) => r.port);
        expect(workers.length).toBeGreaterThanOrEqual(1);
        const nodes = (await sql<{ port: number }[]>`
          SELECT DISTINCT nodeport AS port FROM citus_shards WHERE table_name = 'executions'::regclass ORDER BY 1`).map((r) => r.port);
        expect(nodes).toEqual(workers);

        // The foreign keys are back, as they were.
        expect(await foreignKeys(sql)).toEqual(before);
        expect(first.foreignKeys).toHaveLength(before.length);

        // SET LOCAL on the coordinator reaches the workers (new sessions of this database).
        const fresh = connect(db.url, { max: 1 });
        try {
          const [{ v }] = await fresh<{ v: string }[]>`SELECT current_setting('citus.propagate_set_commands') AS v`;
          expect(v).toBe('local');
        } finally {
          await fresh.end();
        }

        // A second call (and migrate's) changes nothing.
        const shards = await sql`SELECT shardid, logicalrelid::text FROM pg_dist_shard ORDER BY shardid`;
        expect(await distribute(sql)).toEqual({ citus: true, reference: [], distributed: [], foreignKeys: [], propagateSet: false });
        expect(await migrate(sql)).toEqual([]);
        expect(await sql`SELECT shardid, logicalrelid::text FROM pg_dist_shard ORDER BY shardid`).toEqual(shards);
        expect(await foreignKeys(sql)).toEqual(before);

        // And the schema works across the cluster: a session's rows land on one shard, found by session.
        await sql`INSERT INTO sessions (id, directory) VALUES ('ses_citus_a', '/a'), ('ses_citus_b', '/b')`;
        const [{ n }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sessions`;
        expect(n).toBe(2);
      } finally {
        await sql.end();
        await db.drop();
      }
    });
  });
}
