/**
 * Usage aggregates benchmark: `usage` over the 100× history, through the gateway (HTTP, a reader token,
 * GraphQL), against the same SQL statement run directly with postgres.js (the text and parameters the
 * gateway sent, captured once).
 *
 *   npx tsx bench/usage.ts
 *   HISTORY=100 SESSIONS=120 RUNS=15 npx tsx bench/usage.ts
 *
 * A fresh database (DATABASE_URL's server, embedded PostgreSQL when unset) is seeded as bench/reads.ts seeds
 * its HISTORY run: SESSIONS sessions of bench/reads' data (support/reads-data.ts) under SESSIONS × (HISTORY − 1)
 * older sessions of 16 executions on average, two messages of 5 parts each (support/history-data.ts). Then,
 * so that every figure of a group has something to count: the executions get one of three models of two
 * providers, reasoning and cache tokens and a cost (every other one), two parts of each answer become tool
 * calls (one in 7 failed) and every fourth execution a job (completed, error, cancelled or lost).
 * The queries (a month of the history, January 2025, which holds all of its executions):
 * - `model-day`: grouped by MODEL and DAY in Europe/Paris;
 * - `session`: grouped by SESSION, the first page of 50 sessions;
 * - `agent-status`: grouped by AGENT and STATUS;
 * - `one-day`: one day of the month (an eighth of the history's executions), by MODEL and HOUR;
 * - `subtree`: one session with its subtree (no subtree here: one session), by DAY.
 * USAGE_KEEP=1 keeps the seeded database on the server between runs (`gw_bench_usage_<HISTORY>x_<SESSIONS>`,
 * reused when present; migrations newer than it are applied).
 * EXPLAIN=1 prints each statement's plan (EXPLAIN ANALYZE) first.
 * Each is run RUNS times one after the other, alternating gateway and direct; prints the medians and the ratio.
 */
import postgres from 'postgres';
import { connect } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { openDatabase } from '../db/index.js';
import { createScratchDatabase } from '../db/scratch.js';
import { buildApp } from '../server/app.js';
import { createToken } from '../domain/tokens.js';
import { usage, type UsageInput } from '../domain/usage.js';
import { SYSTEM } from '../domain/access.js';
import { seedReads } from './support/reads-data.js';
import { seedHistory } from './support/history-data.js';

const SESSIONS = Number(process.env.SESSIONS ?? 120);
const HISTORY = Number(process.env.HISTORY ?? 100);
const RUNS = Number(process.env.RUNS ?? 15);

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

const QUERY = `query($input: UsageInput!) { usage(input: $input) { __typename
  ... on UsageReport { groups { key { providerID modelID agent sessionID status period }
    executions { total succeeded failed } tokens { input output reasoning cacheRead cacheWrite } cost { total reportedExecutions }
    toolCalls { total failed byTool { tool calls failed } } jobs { total completed error cancelled lost } duration { p50Ms p95Ms } }
    pageInfo { hasNextPage endCursor } }
  ... on Error { message } } }`;

/** bench/reads' data under the older history, then models, tool calls and jobs (above). */
async function seed(sql: ReturnType<typeof connect>) {
  await seedReads(sql, SESSIONS);
  await seedHistory(sql, SESSIONS * (HISTORY - 1));
  await sql.unsafe(`
    UPDATE executions SET
      provider_id = CASE WHEN sequence % 3 = 2 THEN 'openai' ELSE 'anthropic' END,
      model_id = CASE sequence % 3 WHEN 0 THEN 'claude-sonnet-4' WHEN 1 THEN 'claude-haiku-4' ELSE 'gpt-5' END,
      reasoning_tokens = sequence * 3, cache_read_tokens = 500 + sequence, cache_write_tokens = 20,
      cost = CASE WHEN sequence % 2 = 0 THEN 0.01 * sequence END`);
  await sql.unsafe(`
    UPDATE parts p SET type = 'TOOL', text = NULL, tool = CASE p.index WHEN 1 THEN 'bash' ELSE 'edit' END,
      input = '{}'::jsonb, status = CASE WHEN (hashtext(p.id) & 7) = 0 THEN 'error' ELSE 'completed' END
    FROM messages m WHERE m.session_id = p.session_id AND m.id = p.message_id AND m.role = 'ASSISTANT' AND p.index IN (1, 2)`);
  await sql.unsafe(`
    INSERT INTO jobs (id, session_id, execution_id, host_id, kind, title, status, started_at, completed_at)
    SELECT 'job_' || substr(x.id, 5), x.session_id, x.id, 'hst_bench', 'SHELL', 'job',
      (ARRAY['COMPLETED', 'ERROR', 'CANCELLED', 'LOST'])[1 + (x.sequence / 4) % 4], x.started_at, x.settled_at
    FROM executions x WHERE x.sequence % 4 = 0`);
  await sql`VACUUM ANALYZE`;
}

/** A scratch database, or with USAGE_KEEP=1 one kept on the server (seeded once). */
async function benchDatabase(serverUrl: string): Promise<{ url: string; fresh: boolean; drop(): Promise<void> }> {
  if (process.env.USAGE_KEEP !== '1') return { ...(await createScratchDatabase(serverUrl, 'gw_bench_usage')), fresh: true };
  const name = `gw_bench_usage_${HISTORY}x_${SESSIONS}`;
  const admin = connect(serverUrl, { max: 1 });
  try {
    const [row] = await admin<{ seeded: string | null }[]>`SELECT shobj_description(oid, 'pg_database') AS seeded FROM pg_database WHERE datname = ${name}`;
    const u = new URL(serverUrl);
    u.pathname = `/${name}`;
    if (row && row.seeded === 'seeded') return { url: u.toString(), fresh: false, drop: async () => {} };
    if (row) await admin.unsafe(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.unsafe(`CREATE DATABASE ${name}`);
    return { url: u.toString(), fresh: true, drop: async () => {} };
  } finally {
    await admin.end();
  }
}

async function main() {
  const db = await openDatabase();
  const scratch = await benchDatabase(db.url);
  const sql = connect(scratch.url, { max: 4 });
  let app: ReturnType<typeof buildApp> | null = null;
  let direct: postgres.Sql | null = null;
  try {
    await migrate(sql);
    const t0 = Date.now();
    if (scratch.fresh) await seed(sql);
    else await sql`VACUUM ANALYZE`;
    const [first] = await sql<{ id: string }[]>`SELECT id FROM sessions WHERE directory LIKE '/bench/reads/%' ORDER BY id LIMIT 1`;
    const [c] = await sql`SELECT (SELECT count(*)::int FROM executions) AS executions, (SELECT count(*)::int FROM parts WHERE type = 'TOOL') AS tools,
      (SELECT count(*)::int FROM jobs) AS jobs, (SELECT count(*)::int FROM sessions) AS sessions, (SELECT count(*)::int FROM parts) AS parts`;
    console.log(`${scratch.fresh ? 'seeded' : 'kept'}: ${c.sessions} sessions, ${c.executions} executions, ${c.tools} tool calls, ${c.jobs} jobs (${c.parts} parts) in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    if (process.env.USAGE_KEEP === '1') await sql.unsafe(`COMMENT ON DATABASE ${new URL(scratch.url).pathname.slice(1)} IS 'seeded'`);


    app = buildApp({ sql, gateway: { sweepIntervalMs: 0, retentionIntervalMs: 0 } });
    await app.start();
    const token = (await createToken(sql, { role: 'reader' })).secret;
    const post = async (input: Record<string, unknown>) => {
      const r = await fetch(app!.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query: QUERY, variables: { input } }) });
      const body = (await r.json()) as any;
      if (body.errors || body.data.usage.__typename !== 'UsageReport') throw new Error(JSON.stringify(body));
      return body.data.usage;
    };
    // The statement as the gateway sends it: captured from a client of its own (same transform), then run as is.
    let captured: { text: string; params: unknown[] } | null = null;
    direct = postgres(scratch.url, {
      max: 1, onnotice: () => {}, transform: { column: { from: postgres.toCamel } },
      debug: (_c, text, params) => { if (/\bper_key AS MATERIALIZED\b/.test(text)) captured = { text, params: params as unknown[] }; },
    });
    const month = { from: '2025-01-01T00:00:00Z', to: '2025-02-01T00:00:00Z' };
    const cases: [string, Record<string, unknown>][] = [
      ['model-day', { ...month, groupBy: ['MODEL', 'DAY'], timeZone: 'Europe/Paris' }],
      ['session', { ...month, groupBy: ['SESSION'], first: 50 }],
      ['agent-status', { ...month, groupBy: ['AGENT', 'STATUS'] }],
      ['one-day', { from: '2025-01-03T00:00:00Z', to: '2025-01-04T00:00:00Z', groupBy: ['MODEL', 'HOUR'], timeZone: 'Europe/Paris' }],
      ['subtree', { ...month, groupBy: ['DAY'], sessionID: first.id, subtree: true, from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z' }],
    ];
    console.log(`usage over ${HISTORY}x history (${c.executions} executions), ${RUNS} runs each, medians:`);
    for (const [name, input] of cases) {
      captured = null;
      const first = await usage(direct as never, SYSTEM, { ...input, from: new Date(input.from as string), to: new Date(input.to as string) } as UsageInput);
      const stmt = captured as { text: string; params: unknown[] } | null;
      if (!stmt) throw new Error('statement not captured');
      if (process.env.EXPLAIN === '1') {
        const plan = await direct.unsafe(`EXPLAIN (ANALYZE, BUFFERS) ${stmt.text}`, stmt.params as never[]);
        console.log(plan.map((r: any) => r['QUERY PLAN'] ?? Object.values(r)[0]).join('\n'));
      }
      const viaGateway = await post(input);
      if (viaGateway.groups.length !== first.groups.length) throw new Error(`${name}: the gateway answered ${viaGateway.groups.length} groups, the domain ${first.groups.length}`);
      const g: number[] = [];
      const d: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        let t = performance.now();
        await post(input);
        g.push(performance.now() - t);
        t = performance.now();
        await direct.unsafe(stmt.text, stmt.params as never[]);
        d.push(performance.now() - t);
      }
      console.log(`  ${name.padEnd(13)} groups ${String(first.groups.length).padStart(4)}   gateway ${median(g).toFixed(1).padStart(7)} ms   SQL directly ${median(d).toFixed(1).padStart(7)} ms   ratio ${(median(g) / median(d)).toFixed(2)}`);
    }
  } finally {
    await app?.stop().catch(() => {});
    await direct?.end({ timeout: 1 }).catch(() => {});
    await sql.end({ timeout: 1 }).catch(() => {});
    await scratch.drop().catch(() => {});
    await db.stop?.().catch(() => {});
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
