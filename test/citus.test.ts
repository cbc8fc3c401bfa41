import { describe, expect, inject, it } from 'vitest';
import { connect, type Sql } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { distribute, DistributionPlanError, DISTRIBUTION_PLAN, planned } from '../db/distribute.js';
import { createTestDatabase, gql, startTestGateway } from './harness.js';
import { buildApp } from '../server/app.js';
import { appendText, begin, createSession, ok, registerHost, settle, startJob } from './fixtures.js';

/** The foreign keys of the public schema, as their definitions. */
async function foreignKeys(sql: Sql): Promise<string[]> {
  const rows = await sql<{ d: string }[]>`
    SELECT conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) AS d FROM pg_constraint
    WHERE contype = 'f' AND connamespace = 'public'::regnamespace ORDER BY 1`;
  return rows.map((r) => r.d);
}

// On plain Postgres too (CI): the schema the migrations make is one Citus can place as the plan says.
it('DISTRIBUTION_PLAN names every table, and the keys follow Citus\'s rules for it', async () => {
  const db = await createTestDatabase();
  const sql = connect(db.url, { max: 1 });
  try {
    await migrate(sql, { distribute: false });
    const tables = (await sql<{ t: string }[]>`
      SELECT relname AS t FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p') AND NOT relispartition`).map((r) => r.t);
    expect(tables.filter((t) => !planned(t))).toEqual([]);
    const byTable = new Map(DISTRIBUTION_PLAN.distributed.map((d) => [d.table as string, d]));
    const group = (t: string): string => { const d = byTable.get(t)!; return d.colocateWith === 'none' ? t : group(d.colocateWith); };
    for (const t of [...DISTRIBUTION_PLAN.reference, ...byTable.keys()]) expect(tables, `plan names a missing table ${t}`).toContain(t);

    // Every unique index of a distributed table includes its distribution column.
    const uniques = await sql<{ table: string; index: string; columns: string[] }[]>`
      SELECT c.relname AS table, i.indexrelid::regclass::text AS index,
             array(SELECT a.attname FROM pg_attribute a WHERE a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)) AS columns
      FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
      WHERE c.relnamespace = 'public'::regnamespace AND i.indisunique`;
    for (const u of uniques) {
      const d = byTable.get(u.table);
      if (d) expect(u.columns, `${u.index} must include ${d.column}`).toContain(d.column);
    }
    expect(uniques.length).toBeGreaterThan(10);

    // Foreign keys: between distributed tables, within a colocation group and on the distribution
    // columns; from a distributed table, to a reference one; none from a reference or local table.
    const fks = await sql<{ name: string; from: string; to: string; cols: string[]; refs: string[] }[]>`
      SELECT conname AS name, conrelid::regclass::text AS from, confrelid::regclass::text AS to,
             array(SELECT attname FROM unnest(conkey) WITH ORDINALITY k(n, o) JOIN pg_attribute ON attrelid = conrelid AND attnum = k.n ORDER BY o) AS cols,
             array(SELECT attname FROM unnest(confkey) WITH ORDINALITY k(n, o) JOIN pg_attribute ON attrelid = confrelid AND attnum = k.n ORDER BY o) AS refs
      FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace`;
    const reference = DISTRIBUTION_PLAN.reference as readonly string[];
    for (const fk of fks) {
      const from = byTable.get(fk.from);
      const to = byTable.get(fk.to);
      expect(from, `${fk.name}: only distributed tables may have foreign keys`).toBeDefined();
      if (!to) {
        expect(reference, `${fk.name}: to a reference table`).toContain(fk.to);
        continue;
      }
      expect(group(fk.from), `${fk.name}: colocated`).toBe(group(fk.to));
      const at = fk.refs.indexOf(to.column);
      expect(at >= 0 && fk.cols[at] === from!.column, `${fk.name}: ${fk.cols} -> ${fk.refs} on the distribution columns`).toBe(true);
    }
    expect(fks.length).toBeGreaterThan(10);
  } finally {
    await sql.end();
    await db.drop();
  }
});

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
    it('reads and writes of one session by its rows\' IDs run on its shard alone: a statement across shards is refused', async () => {
      const g = await startTestGateway({ sweepIntervalMs: 0 });
      // A second instance whose every statement must be a one-shard (router) one: Citus raises an error
      // for any statement that would run tasks on several shards.
      const strictSql = connect(g.dbUrl, { max: 3, settings: { 'citus.multi_task_query_log_level': 'error' } });
      const strict = buildApp({ sql: strictSql, gateway: { sweepIntervalMs: 0, retentionIntervalMs: 0 } });
      try {
        await strict.start();
        const s = { ...g, gql: (q: string, v?: Record<string, unknown>, t?: string | null) => gql(strict.url, t === undefined ? g.admin : t, q, v) };
        const [{ n }] = await strictSql<{ n: number }[]>`SELECT count(*)::int AS n FROM citus_shards WHERE table_name = 'executions'::regclass`;
        expect(n).toBeGreaterThan(1);
        // Statements across shards are what this instance refuses (the check is on).
        await expect(strictSql`SELECT count(*) FROM executions`).rejects.toThrow(/multi-task|multi task|shards/i);

        const host = await registerHost(g);
        const session = await createSession(g, { title: 'one shard', directory: '/citus' });
        // Writes of the session, through the strict instance.
        const e1 = await begin(s as never, host, session.id);
        expect(e1.__typename).toBe('Execution');
        const m = await appendText(s as never, host, session.id, 'hello', { executionID: e1.id });
        expect(m.__typename).toBe('Message');
        const job = await startJob(s as never, host, session.id, { executionID: e1.id });
        expect(job.__typename).toBe('Job');
        expect((await settle(s as never, host, e1.id)).status).toBe('SUCCEEDED');
        const fixed = await ok(s as never, `mutation($input: CorrectMessagePartInput!) { correctMessagePart(input: $input) { __typename ... on MessagePartCorrected { message { revision } } } }`,
          { input: { messageID: m.id, partID: m.parts[0].id, text: 'hello, corrected' } });
        expect(fixed.__typename).toBe('MessagePartCorrected');

        // Reads by ID, and the session's own lists.
        const read = await ok(s as never, `query($e: ID!, $m: ID!, $j: ID!) {
          execution(id: $e) { id status sequence changeset { coverage { __typename } } messages(first: 5) { edges { node { id } } } jobs(first: 5) { edges { node { id } } } }
          message(id: $m) { id revision parts { id ... on TextPart { text } } }
          job(id: $j) { id status }
          node(id: $e) { id }
          continuity(executionID: $e) { __typename }
        }`, { e: e1.id, m: m.id, j: job.id });
        expect(read.id).toBe(e1.id);
        const all = await s.gql(`query($e: ID!, $m: ID!, $j: ID!, $s: ID!) {
          message(id: $m) { id revision parts { ... on TextPart { text } } }
          job(id: $j) { id status }
          node(id: $e) { id }
          session(id: $s) { id executions(first: 3) { edges { node { id status } } } messages(first: 3) { edges { node { id } } } jobs(first: 3) { edges { node { id } } } }
        }`, { e: e1.id, m: m.id, j: job.id, s: session.id });
        expect(all.errors).toBeUndefined();
        expect(all.data.message.parts[0].text).toBe('hello, corrected');
        expect(all.data.session.executions.edges.map((x: any) => x.node.id)).toEqual([e1.id]);
        expect(all.data.job.id).toBe(job.id);
      } finally {
        await strict.stop();
        await strictSql.end({ timeout: 1 });
        await g.stop();
      }
    });

    it('upgrades a distributed database: the later migrations apply statement by statement (066: a column added to executions, then its rows updated from hosts), later tables placed', async () => {
      const db = await createTestDatabase();
      const sql = connect(db.url, { max: 2 });
      try {
        // A running cluster as a gateway of migration 065 left it: distributed, with executions of several agents' hosts.
        expect((await migrate(sql, { through: 65 })).at(-1)).toBe('065_review_comments.sql');
        expect(await sql`SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'executions'::regclass`).toHaveLength(1);
        expect(await sql`SELECT to_regclass('model_calls') AS t`).toEqual([{ t: null }]);
        const kinds = ['claude-code', 'opencode', 'codex'];
        for (const [i, kind] of kinds.entries()) {
          await sql`INSERT INTO hosts (id, name, lease_ms, lease_expires_at) VALUES (${`hst_${kind}`}, ${`${kind} host /w`}, 60000, now())`;
          await sql`INSERT INTO sessions (id, directory) VALUES (${`ses_upgrade_${i}`}, '/w')`;
          await sql`INSERT INTO executions (id, session_id, sequence, host_id, status, trigger, settled_at,
              input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens)
            VALUES (${`exe_upgrade_${i}`}, ${`ses_upgrade_${i}`}, 1, ${`hst_${kind}`}, 'SUCCEEDED', 'PROMPT', now(), 300, 30, 20, 600, 100)`;
        }

        // The upgrade: a gateway's start (every later file in one transaction, then the new tables placed).
        const applied = await migrate(sql);
        expect(applied[0]).toBe('066_usage_one_meaning.sql');
        expect(applied).toContain('067_model_calls.sql');
        expect(await sql`SELECT version FROM schema_migrations WHERE version > 65 ORDER BY 1`).toHaveLength(applied.length);
        const columns = await sql`SELECT column_name AS c FROM information_schema.columns WHERE table_name = 'executions' AND column_name IN ('cache_write_5m_tokens', 'cache_write_1h_tokens') ORDER BY 1`;
        expect(columns.map((r) => r.c)).toEqual(['cache_write_1h_tokens', 'cache_write_5m_tokens']);
        // Column added on the shards too: a read across them names it.
        const rows = await sql`SELECT h.name, e.input_tokens::int AS i, e.output_tokens::int AS o, e.cache_write_5m_tokens AS w5
          FROM executions e JOIN hosts h ON h.id = e.host_id ORDER BY h.name`;
        expect(rows).toEqual([
          { name: 'claude-code host /w', i: 1000, o: 30, w5: null }, // cached input added
          { name: 'codex host /w', i: 300, o: 30, w5: null }, // as it counted
          { name: 'opencode host /w', i: 1000, o: 50, w5: null }, // cached input and reasoning output added
        ]);
        expect(await sql`SELECT partmethod AS m FROM pg_dist_partition WHERE logicalrelid = to_regclass('model_calls')`).toEqual([{ m: 'h' }]);
        expect(await migrate(sql)).toEqual([]);
      } finally {
        await sql.end();
        await db.drop();
      }
    });

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
        for (const t of local) expect(t).toMatch(/^(tokens|clocks|schema_migrations|export_cursors|bridge_opencode_.+)$/);
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

        // SET LOCAL on the coordinator reaches the workers (this session, and new sessions of this database).
        const [{ mine }] = await sql<{ mine: string }[]>`SELECT current_setting('citus.propagate_set_commands') AS mine`;
        expect(mine).toBe('local');
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
