import type { Sql } from './connection.js';

/**
 * Whether the gateway's tables are distributed (Citus, by session: README "Scaling", db/distribute.ts).
 * A few reads take another form there, because Citus cannot push a LIMIT correlated to an outer row
 * down to the shards (the paged loaders of resolvers/loaders.ts): on one Postgres they keep the form
 * that is cheapest there. Detected once per pool when the gateway starts (`detectDistribution`).
 */
const distributed = new WeakMap<object, boolean>();

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
  return d;
}

/** What `detectDistribution` found for this pool (false before it ran). */
export function isDistributed(sql: object): boolean {
  return distributed.get(sql) ?? false;
}
