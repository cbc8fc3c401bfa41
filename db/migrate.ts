import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql, Tx } from './connection.js';
import { distribute } from './distribute.js';
import { ADVISORY_LOCKS } from './advisory-locks.js';
import { citusInstalled } from './cluster.js';
import { splitStatements } from './sql-statements.js';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
/** Every instance takes the same advisory lock, so two starting at once apply each file once. */
const MIGRATION_LOCK = ADVISORY_LOCKS.schema;

export function migrationFiles(): { version: number; name: string; sql: string }[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.split('_')[0]), name: f, sql: readFileSync(path.join(dir, f), 'utf8') }));
}

/**
 * Applies the numbered SQL files in db/migrations that this database has not seen, in order. On a Citus
 * coordinator it then places the tables on the cluster (db/distribute.ts; a no-op once they are), unless
 * `distribute: false` (`gateway distribute` runs that step itself, to report it). `through` stops after that
 * version (a database as an older gateway left it, to test an upgrade).
 *
 * On a Citus coordinator each file is applied statement by statement (`applyMigration`), still in the one
 * transaction.
 */
export async function migrate(sql: Sql, opts: { distribute?: boolean; through?: number } = {}): Promise<string[]> {
  const applied: string[] = [];
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;
    const done = new Set((await tx`SELECT version FROM schema_migrations`).map((r) => Number(r.version)));
    const cluster = await citusInstalled(tx);
    for (const m of migrationFiles()) {
      if (done.has(m.version) || m.version > (opts.through ?? Infinity)) continue;
      await applyMigration(tx, m.sql, { cluster });
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`;
      applied.push(m.name);
    }
  });
  if (opts.distribute ?? true) await distribute(sql);
  return applied;
}

/**
 * Applies one migration file's text in the caller's transaction. On one PostgreSQL the text is sent whole. On a
 * Citus coordinator (`cluster`, found by `citusInstalled` when not given) it is sent statement by statement, after
 * `SET LOCAL citus.multi_shard_modify_mode TO 'sequential'`, for two rules of Citus on tables already distributed
 * (an upgrade of a running cluster):
 * - DDL on a distributed table reaches the workers as its query string, and a worker refuses a string of several
 *   statements (`cannot insert multiple commands into a prepared statement`);
 * - after parallel DDL on a distributed table (one connection per shard) the transaction cannot read a reference
 *   table (`cannot execute SELECT on table "hosts" because there was a parallel DDL access to distributed table
 *   "executions" in the same transaction`): sequential mode, Citus' remedy, runs it over one connection per worker.
 */
export async function applyMigration(tx: Tx, text: string, opts: { cluster?: boolean } = {}): Promise<void> {
  const cluster = opts.cluster ?? (await citusInstalled(tx));
  if (!cluster) {
    await tx.unsafe(text);
    return;
  }
  await tx`SET LOCAL citus.multi_shard_modify_mode TO 'sequential'`;
  for (const statement of splitStatements(text)) await tx.unsafe(statement);
}
