import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql } from './connection.js';
import { distribute } from './distribute.js';
import { ADVISORY_LOCKS } from './advisory-locks.js';

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
 * `distribute: false` (`gateway distribute` runs that step itself, to report it).
 */
export async function migrate(sql: Sql, opts: { distribute?: boolean } = {}): Promise<string[]> {
  const applied: string[] = [];
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;
    const done = new Set((await tx`SELECT version FROM schema_migrations`).map((r) => Number(r.version)));
    for (const m of migrationFiles()) {
      if (done.has(m.version)) continue;
      await tx.unsafe(m.sql);
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`;
      applied.push(m.name);
    }
  });
  if (opts.distribute ?? true) await distribute(sql);
  return applied;
}
