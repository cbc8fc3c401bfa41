import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, literalLimit, type Sql } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { createToken } from '../domain/tokens.js';
import { buildApp, type App } from '../server/app.js';
import { seedReads } from '../bench/support/reads-data.js';
import { createTestDatabase, gql } from './harness.js';

/**
 * A list of the newest sessions keeps one cached plan per page size however long the history grows:
 * its LIMIT is in the statement's text (db/connection.ts literalLimit). Sent as a parameter, the
 * generic plan counts on a tenth of the table, which on a few thousand sessions is dearer than a custom
 * plan, so PostgreSQL planned every request again. Read off the gateway's own connection (a pool of
 * one): pg_prepared_statements counts the generic and custom plans of each of its statements.
 */
let db: { url: string; drop(): Promise<void> };
let sql: Sql;
let app: App;
let token: string;
beforeAll(async () => {
  db = await createTestDatabase();
  sql = connect(db.url, { max: 1 });
  await migrate(sql);
  await seedReads(sql, 101);
  // An older history of 5,000 sessions under the seeded ones (their IDs sort before them).
  await sql`INSERT INTO sessions (id, title, directory, host_id, created_at, updated_at)
    SELECT 'ses_' || lpad(to_hex(1700000000000 + i), 11, '0') || '000' || substr(md5(i::text), 1, 12), 'old ' || i, '/old', 'hst_bench', now(), now()
    FROM generate_series(1, 5000) i`;
  await sql`ANALYZE`;
  app = buildApp({ sql, gateway: { sweepIntervalMs: 0, retentionIntervalMs: 0 } });
  await app.start();
  await app.gateway.sequencer.stop();
  token = (await createToken(sql, { role: 'reader' })).secret;
});
afterAll(async () => {
  await app?.stop();
  await sql?.end({ timeout: 1 });
  await db?.drop();
});

async function plansOf(pattern: string) {
  return sql<{ statement: string; genericPlans: number; customPlans: number }[]>`
    SELECT statement, generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE statement LIKE ${pattern}`;
}

describe('lists of a long history keep their cached plan', () => {
  it('sessions with their executions: planned a few times, then the cached plan', async () => {
    const query = `query($n: Int!) { sessions(first: $n) { edges { node { id title executions(first: 5) { edges { node { id status changeset { fileCount } } } } } } } }`;
    for (let i = 0; i < 10; i++) {
      const r = await gql(app.url, token, query, { n: 20 });
      expect(r.errors).toBeUndefined();
      expect(r.data.sessions.edges).toHaveLength(20);
    }
    const [plans] = await plansOf('%FROM sessions WHERE%LATERAL%');
    expect(plans.customPlans).toBeLessThanOrEqual(5);
    expect(plans.genericPlans).toBeGreaterThanOrEqual(5);
  });

  it('sessions alone, with a cursor: the same', async () => {
    const first = await gql(app.url, token, `{ sessions(first: 3) { pageInfo { endCursor } } }`);
    const after = first.data.sessions.pageInfo.endCursor;
    for (let i = 0; i < 10; i++) {
      const r = await gql(app.url, token, `query($after: String) { sessions(first: 7, after: $after) { edges { node { id title } } } }`, { after });
      expect(r.data.sessions.edges).toHaveLength(7);
    }
    const plans = (await plansOf('%FROM sessions WHERE%id < %')).filter((p) => !p.statement.includes('LATERAL'));
    expect(plans).toHaveLength(1);
    expect(plans[0].customPlans).toBeLessThanOrEqual(5);
    expect(plans[0].genericPlans).toBeGreaterThanOrEqual(5);
  });

  it('a LIMIT written into the text is a checked integer', () => {
    expect(() => literalLimit(sql, 1.5)).toThrow(RangeError);
    expect(() => literalLimit(sql, -1)).toThrow(RangeError);
    expect(() => literalLimit(sql, Number('1; DROP TABLE sessions'))).toThrow(RangeError);
  });
});
