import type { Sql, Tx } from './connection.js';

/**
 * Whether the gateway's tables are distributed (Citus, by session: docs/citus.md, db/distribute.ts).
 * A few reads take another form there, because Citus cannot push a LIMIT correlated to an outer row
 * down to the shards (the paged loaders of resolvers/loaders.ts): on one Postgres they keep the form
 * that is cheapest there. Detected once per pool when the gateway starts (`detectDistribution`).
 */
const distributed = new WeakMap<object, boolean>();

/** Whether the `citus` extension is in this database (a coordinator, its tables distributed yet or not). */
export async function citusInstalled(sql: Sql | Tx): Promise<boolean> {
  const [r] = await sql<{ c: boolean }[]>`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS c`;
  return r.c;
}

export async function detectDistribution(sql: Sql): Promise<boolean> {
  const [r] = await sql<{ d: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AND to_regclass('pg_dist_partition') IS NOT NULL AS d`;
  let d = r.d;
  if (d) {
    // (pg_dist_partition exists only with the extension: named in a statement sent only then.)
    const [x] = await sql.unsafe(`SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass('sessions')) AS d`);
    d = x.d;
  }
  distributed.set(sql, d);
  if (d) distributedSeen = true;
  return d;
}

let distributedSeen = false;

/**
 * Whether `detectDistribution` has found distributed tables on any pool of this process, for the few
 * statements that run inside a transaction (whose handle is not the pool): they may take their cluster form
 * then. Such a form must be correct on one Postgres too (a process of the test suite may hold both kinds);
 * only its cost differs.
 */
export function distributedInProcess(): boolean {
  return distributedSeen;
}

/** What `detectDistribution` found for this pool (false before it ran). */
export function isDistributed(sql: object): boolean {
  return distributed.get(sql) ?? false;
}
