import { connect } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { createScratchDatabase } from '../db/scratch.js';
import { seedReads } from './support/reads-data.js';
const scratch = await createScratchDatabase('postgres://postgres@127.0.0.1:5432/postgres', 'gw_cols');
const sql = connect(scratch.url, { max: 2 });
await migrate(sql);
const S = await seedReads(sql, 120);
const ids = S.sessions.slice(0, 100);
async function t(name: string, f: () => Promise<unknown>) {
  for (let i = 0; i < 50; i++) await f();
  const c0 = process.cpuUsage(); const t0 = performance.now();
  for (let i = 0; i < 300; i++) await f();
  const c = process.cpuUsage(c0);
  console.log(name, ((c.user + c.system) / 300).toFixed(0), 'µs cpu/op', ((performance.now() - t0) / 300).toFixed(2), 'ms wall');
}
await t('exec *', () => sql`SELECT e.* FROM unnest(${ids}::text[]) AS p(id) CROSS JOIN LATERAL (SELECT * FROM executions WHERE session_id = p.id ORDER BY sequence DESC LIMIT 6) e`);
await t('exec 6 cols', () => sql`SELECT e.id, e.session_id, e.sequence, e.status, e.settled_at FROM unnest(${ids}::text[]) AS p(id) CROSS JOIN LATERAL (SELECT * FROM executions WHERE session_id = p.id ORDER BY sequence DESC LIMIT 6) e`);
await t('exec json', () => sql`SELECT json_agg(e) FROM unnest(${ids}::text[]) AS p(id) CROSS JOIN LATERAL (SELECT * FROM executions WHERE session_id = p.id ORDER BY sequence DESC LIMIT 6) e`);
await t('sessions *', () => sql`SELECT * FROM sessions ORDER BY id DESC LIMIT 101`);
const ex = (await sql`SELECT id FROM executions`).map((r: any) => r.id).slice(0, 500);
await t('changesets *', () => sql`SELECT * FROM changesets WHERE execution_id = ANY(${ex})`);
await sql.end(); await scratch.drop(); process.exit(0);
