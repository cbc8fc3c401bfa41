/**
 * Session changes benchmark: `Session.changes(from, to)` (and `Execution.driftBefore`) read from the stored
 * snapshot changeset, against an execution's own frozen changeset of the same size.
 *
 *   npx tsx bench/session-changes.ts
 *   FILES=2000 CHANGED=200 EXECUTIONS=5 SECONDS=3 npx tsx bench/session-changes.ts
 *
 * A fresh database on the DATABASE_URL server (embedded PostgreSQL when unset); one gateway instance in
 * this process. A worktree of FILES files; EXECUTIONS executions, each editing CHANGED/EXECUTIONS files
 * (different ones), then one more execution editing the same CHANGED files at once (its own changeset is the
 * size of the range's). Figures:
 * 1. the first read of `changes(from: 1, to: EXECUTIONS)` (computed from the manifests and stored), against
 *    the second read (the stored rows), medians of sequential reads;
 * 2. read throughput at 32 concurrent clients of `changes { coverage files { path status patch } }` over the
 *    whole range, against `execution(id) { changeset { … the same … } }` of the execution of the same size:
 *    the ratio says what reading a range costs next to reading an execution's changeset.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { openDatabase } from '../db/index.js';
import { createScratchDatabase } from '../db/scratch.js';
import { buildApp } from '../server/app.js';
import { createToken } from '../domain/tokens.js';
import { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';

const FILES = Number(process.env.FILES ?? 2_000);
const CHANGED = Number(process.env.CHANGED ?? 200);
const EXECUTIONS = Number(process.env.EXECUTIONS ?? 5);
const SECONDS = Number(process.env.SECONDS ?? 3);
const CLIENTS = 32;

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
const fileOf = (root: string, i: number) => path.join(root, 'src', `m${Math.floor(i / 100)}`, `f${i}.ts`);
const body = (i: number, tag: string) => Array.from({ length: 20 }, (_, j) => `export const v_${i}_${j} = ${JSON.stringify(tag + randomBytes(8).toString('hex'))};\n`).join('');

async function main() {
  const db = await openDatabase();
  const scratch = await createScratchDatabase(db.url, 'gw_bench');
  const sql = connect(scratch.url, { max: 10 });
  const root = mkdtempSync(path.join(tmpdir(), 'gw-bench-changes-'));
  let app: ReturnType<typeof buildApp> | null = null;
  let host: ReferenceHost | null = null;
  try {
    await migrate(sql);
    app = buildApp({ sql, gateway: { sweepIntervalMs: 0, retentionIntervalMs: 0 } });
    await app.start();
    const hostToken = (await createToken(sql, { role: 'host' })).secret;
    const readerToken = (await createToken(sql, { role: 'reader' })).secret;
    host = new ReferenceHost({ url: app.url, token: hostToken, leaseMs: 600_000 });
    await host.start();
    const post = async (token: string, query: string, variables: Record<string, unknown> = {}) => {
      const r = await fetch(app!.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }) });
      return (await r.json()) as any;
    };
    const adminToken = (await createToken(sql, { role: 'admin' })).secret;
    const sessionID = (await post(adminToken, 'mutation { createSession(input: { title: "bench", directory: "/bench" }) { ... on Session { id } } }')).data.createSession.id as string;
    const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
    console.log(`load average at start (1/5/15 min): ${load()}`);

    for (let i = 0; i < FILES; i++) {
      if (i % 100 === 0) mkdirSync(path.dirname(fileOf(root, i)), { recursive: true });
      writeFileSync(fileOf(root, i), body(i, 'v0'));
    }
    const cap = new WorktreeCapturer();
    const run = async (edit: () => void) => {
      const start = await cap.snapshot(host!.client, sessionID, root, host!.id);
      const e: any = await host!.beginExecution(sessionID, 'PROMPT', { startSnapshot: start.id });
      edit();
      const end = await cap.snapshot(host!.client, sessionID, root, host!.id);
      await host!.settleExecution(e.id, 'SUCCEEDED', { endSnapshot: end.id });
      return e.id as string;
    };
    const stride = Math.floor(FILES / CHANGED);
    const per = Math.ceil(CHANGED / EXECUTIONS);
    const ids: string[] = [];
    for (let x = 0; x < EXECUTIONS; x++) {
      ids.push(await run(() => { for (let k = x * per; k < Math.min(CHANGED, (x + 1) * per); k++) writeFileSync(fileOf(root, k * stride), body(k * stride, `e${x}`)); }));
    }
    const whole = await run(() => { for (let k = 0; k < CHANGED; k++) writeFileSync(fileOf(root, k * stride), body(k * stride, 'all')); });

    const SEL = 'fileCount coverage { __typename } files { path status patch }';
    const rangeQuery = `query($s: ID!, $a: ID!, $b: ID!) { session(id: $s) { changes(from: $a, to: $b) { ... on Changeset { ${SEL} } } } }`;
    const rangeVars = { s: sessionID, a: ids[0], b: ids[ids.length - 1] };
    const ownQuery = `query($id: ID!) { execution(id: $id) { changeset { ${SEL} } } }`;
    const ownVars = { id: whole };

    const t0 = performance.now();
    const first = await post(readerToken, rangeQuery, rangeVars);
    const firstMs = performance.now() - t0;
    const range = first.data.session.changes;
    const own = (await post(readerToken, ownQuery, ownVars)).data.execution.changeset;
    if (range.fileCount !== CHANGED || own.fileCount !== CHANGED) throw new Error(`bench: expected ${CHANGED} files, got ${range.fileCount} and ${own.fileCount}`);
    const seq = async (q: string, v: Record<string, unknown>) => {
      const ts: number[] = [];
      for (let i = 0; i < 20; i++) { const t = performance.now(); await post(readerToken, q, v); ts.push(performance.now() - t); }
      return median(ts);
    };
    const rangeMs = await seq(rangeQuery, rangeVars);
    const ownMs = await seq(ownQuery, ownVars);
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM snapshot_changesets`;
    console.log(`range of ${EXECUTIONS} executions, ${CHANGED} of ${FILES} files changed: first read (computed and stored) ${fmt(firstMs)}; ` +
      `later reads median ${fmt(rangeMs)} (stored pairs: ${n}); an execution's own ${CHANGED}-file changeset: median ${fmt(ownMs)}; ` +
      `ratio later range read / own changeset read ${(rangeMs / ownMs).toFixed(2)}, first / later ${(firstMs / rangeMs).toFixed(1)}x`);

    const loop = async (q: string, v: Record<string, unknown>) => {
      let count = 0;
      const end = performance.now() + SECONDS * 1000;
      await Promise.all(Array.from({ length: CLIENTS }, async () => { while (performance.now() < end) { await post(readerToken, q, v); count++; } }));
      return count / SECONDS;
    };
    const rangeRps = await loop(rangeQuery, rangeVars);
    const ownRps = await loop(ownQuery, ownVars);
    console.log(`read throughput, ${CLIENTS} clients: Session.changes ${rangeRps.toFixed(0)} req/s, Execution.changeset ${ownRps.toFixed(0)} req/s, ratio ${(rangeRps / ownRps).toFixed(2)}`);
    console.log(`load average at end (1/5/15 min): ${load()}`);
  } finally {
    await host?.stop().catch(() => {});
    await app?.stop().catch(() => {});
    await sql.end({ timeout: 1 });
    await scratch.drop();
    rmSync(root, { recursive: true, force: true });
    await db.stop();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
