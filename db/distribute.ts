import type { Sql, Tx } from './connection.js';
import { ADVISORY_LOCKS } from './advisory-locks.js';

/**
 * Where every table of the schema lives on a Citus cluster. Every table of the public schema
 * must be named here: `distribute()` refuses a table it does not know, so a migration's new table cannot
 * be left on the coordinator by oversight.
 */
export const DISTRIBUTION_PLAN = {
  /** Small tables that every session's rows refer to: a full copy on every node. */
  reference: ['hosts', 'changeset_policy'],
  /**
   * Sharded tables, in the order they are distributed: the first table of a colocation group
   * (`colocateWith: 'none'`) before the tables placed with it. Everything that grows with history goes
   * by its session, with `sessions`, so a session's rows (and the joins and foreign keys between them)
   * are on one node; idempotency keys go by their scope (a session ID, or the global scope).
   */
  distributed: [
    { table: 'sessions', column: 'id', colocateWith: 'none' },
    ...['executions', 'model_calls', 'messages', 'parts', 'jobs', 'journal', 'tombstones', 'settlements', 'host_commands',
      'changesets', 'changeset_files', 'snapshots', 'admissions', 'compactions',
      'snapshot_changesets', 'snapshot_changeset_files', 'review_comments']
      .map((table) => ({ table, column: 'session_id', colocateWith: 'sessions' })),
    // A session's children are kept on its own shard (removeSession reads them under its lock).
    { table: 'session_children', column: 'parent_id', colocateWith: 'sessions' },
    { table: 'idempotency_keys', column: 'scope', colocateWith: 'sessions' },
    // File contents are shared between sessions (content-addressed): sharded by hash, with their holders.
    { table: 'contents', column: 'hash', colocateWith: 'none' },
    { table: 'content_holders', column: 'hash', colocateWith: 'contents' },
  ],
  /**
   * Left as plain tables on the coordinator: `tokens` (its NOTIFY trigger cannot run inside a prepared
   * transaction on a worker), `clocks` (the settlement clock's row lock is the sequencer's mutual
   * exclusion: on a reference table Citus first takes a blocking lock on the shard, so a pass's
   * `FOR UPDATE SKIP LOCKED` would wait instead of answering busy), the migration ledger, the exporters'
   * cursors (`export_cursors`: one row per exporter, advanced under the coordinator's advisory lock), and the
   * retired bridge tables.
   */
  local: ['tokens', 'clocks', 'schema_migrations', 'export_cursors', /^bridge_opencode_/],
} as const;

/** The database has tables that DISTRIBUTION_PLAN does not place. */
export class DistributionPlanError extends Error {
  constructor(readonly tables: string[]) {
    super(`tables not in the distribution plan (db/distribute.ts DISTRIBUTION_PLAN): ${tables.join(', ')}; ` +
      'add each to the plan as a reference, distributed or local table');
    this.name = 'DistributionPlanError';
  }
}

export interface DistributeResult {
  /** False when the database has no `citus` extension: then nothing was done. */
  citus: boolean;
  reference: string[];
  distributed: string[];
  /** Foreign keys dropped before and re-created after distributing. */
  foreignKeys: string[];
  /** True when this call set `citus.propagate_set_commands = 'local'` on the database. */
  propagateSet: boolean;
}

/** The same lock as migrate's: two instances starting at once distribute once. */
const DISTRIBUTE_LOCK = ADVISORY_LOCKS.schema;

export async function hasCitus(sql: Sql | Tx): Promise<boolean> {
  const [row] = await sql`SELECT 1 FROM pg_extension WHERE extname = 'citus'`;
  return !!row;
}

/**
 * On a Citus coordinator (the `citus` extension in this database, workers added), places every table as
 * DISTRIBUTION_PLAN says; elsewhere does nothing. Idempotent: tables already in pg_dist_partition are
 * left as they are, so a second call does nothing.
 *
 * The foreign keys that touch a table still to place are recorded, dropped, and re-created from their
 * definitions once every table is placed: Citus refuses a foreign key between tables it places
 * differently, and making a table with foreign keys to it a reference table would turn the referencing
 * tables into coordinator-local ones. All of it runs in one transaction (in Citus's sequential mode, which
 * lets distributed tables get foreign keys to reference tables made in the same transaction), so a crash
 * midway leaves the tables as they were.
 */
export async function distribute(sql: Sql): Promise<DistributeResult> {
  const result: DistributeResult = { citus: false, reference: [], distributed: [], foreignKeys: [], propagateSet: false };
  if (!(await hasCitus(sql))) return result;
  result.citus = true;
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${DISTRIBUTE_LOCK})`;
    const tables = (await tx<{ name: string }[]>`
      SELECT relname AS name FROM pg_class
      WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p') AND NOT relispartition`).map((r) => r.name);
    const unplanned = tables.filter((t) => !planned(t));
    if (unplanned.length) throw new DistributionPlanError(unplanned);

    const placed = new Set((await tx<{ name: string }[]>`
      SELECT c.relname AS name FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
      WHERE c.relnamespace = 'public'::regnamespace`).map((r) => r.name));
    const present = new Set(tables);
    const todo = (t: string) => present.has(t) && !placed.has(t);
    const reference = DISTRIBUTION_PLAN.reference.filter(todo);
    const distributed = DISTRIBUTION_PLAN.distributed.filter((d) => todo(d.table));
    const names = [...reference, ...distributed.map((d) => d.table)];

    if (names.length) {
      await tx`SET LOCAL citus.multi_shard_modify_mode TO 'sequential'`;
      const fks = await tx<{ table: string; name: string; def: string }[]>`
        SELECT conrelid::regclass::text AS table, quote_ident(conname) AS name, pg_get_constraintdef(oid) AS def
        FROM pg_constraint
        WHERE contype = 'f' AND connamespace = 'public'::regnamespace
          AND (conrelid::regclass::text = ANY(${names}) OR confrelid::regclass::text = ANY(${names}))
        ORDER BY conrelid::regclass::text, conname`;
      for (const fk of fks) await tx.unsafe(`ALTER TABLE ${fk.table} DROP CONSTRAINT ${fk.name}`);
      // The settlement log's commit-time pass (migration 056) would make every settling transaction a
      // distributed one (the clock is on the coordinator, the staged rows on every shard): on a cluster
      // the sequencer positions every row, and the staged notice comes from recordSettlement.
      if (distributed.some((d) => d.table === 'settlements')) await tx`DROP TRIGGER IF EXISTS settlement_positioned_at_commit ON settlements`;
      for (const t of reference) await tx`SELECT create_reference_table(${t}::regclass)`;
      for (const d of distributed) {
        await tx`SELECT create_distributed_table(${d.table}::regclass, ${d.column}, colocate_with => ${d.colocateWith})`
          .catch((e: Error & { detail?: string }) => {
            throw new Error(`distributing ${d.table} by ${d.column}: ${e.message}${e.detail ? ` (${e.detail})` : ''}`, { cause: e });
          });
      }
      // Rows copied into the shards stay behind, invisible, in the coordinator's own table: free them.
      for (const t of names) await tx`SELECT truncate_local_data_after_distributing_table(${t}::regclass)`;
      for (const fk of fks) await tx.unsafe(`ALTER TABLE ${fk.table} ADD CONSTRAINT ${fk.name} ${fk.def}`);
      result.reference = reference;
      result.distributed = distributed.map((d) => d.table);
      result.foreignKeys = fks.map((fk) => `${fk.table}.${fk.name}`);
    }

    // `SET LOCAL lock_timeout` (and the like) on the coordinator then reaches the workers too.
    const [setting] = await tx`SELECT 1 FROM pg_settings WHERE name = 'citus.propagate_set_commands'`;
    const [already] = await tx`
      SELECT 1 FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
      WHERE d.datname = current_database() AND s.setrole = 0
        AND 'citus.propagate_set_commands=local' = ANY(s.setconfig)`;
    if (setting && !already) {
      const [{ db }] = await tx<{ db: string }[]>`SELECT quote_ident(current_database()) AS db`;
      await tx.unsafe(`ALTER DATABASE ${db} SET citus.propagate_set_commands = 'local'`);
      // New sessions take it from the database; this one (a pool's first, that migrated) takes it now.
      await tx`SET citus.propagate_set_commands = 'local'`;
      result.propagateSet = true;
    }
  });
  return result;
}

/** Whether DISTRIBUTION_PLAN places `table` (as reference, distributed or local). */
export function planned(table: string): boolean {
  const p = DISTRIBUTION_PLAN;
  return (p.reference as readonly string[]).includes(table)
    || p.distributed.some((d) => d.table === table)
    || p.local.some((l) => (typeof l === 'string' ? l === table : l.test(table)));
}
