/**
 * Changeset benchmark.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/changesets.ts
 *   FILES=10000 IGNORED=50000 CHANGED=500 SECONDS=5 npx tsx bench/changesets.ts
 *
 * A fresh database is created on the DATABASE_URL server (embedded PostgreSQL when unset) and
 * dropped at the end; one gateway instance runs in this process.
 *
 * 1. Capture of a generated worktree of FILES files (plus a node_modules of IGNORED files that
 *    .gitignore excludes): the first capture with its uploads, a cold capture (new capturer: every
 *    file read and hashed; the gateway already holds the contents, so nothing is uploaded), and a warm
 *    capture (same capturer: stat-only for unchanged files; the manifest sent as a delta against the
 *    capturer's previous snapshot of the session), against `git status --porcelain` on the same tree
 *    (committed, so git compares against its index), medians in the same run. For comparison, warm
 *    captures of a capturer forced to send whole manifests (`deltas: false`), interleaved with the
 *    delta ones.
 * 2. Freeze: settling an execution whose changeset touches CHANGED files, against settling one that
 *    changed nothing (same manifests' size), medians.
 * 3. Read throughput of `execution(id) { changeset { coverage files patch } }` at 32 concurrent
 *    clients over HTTP, against the same SQL (execution, changeset row, file rows) run directly
 *    through postgres.js at 32 concurrent loops: the ceiling.
 */
import { execFileSync } from 'node:child_process';
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

const FILES = Number(process.env.FILES ?? 10_000);
const IGNORED = Number(process.env.IGNORED ?? 50_000);
const CHANGED = Number(process.env.CHANGED ?? 500);
const SECONDS = Number(process.env.SECONDS ?? 5);
const CLIENTS = 32;

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
async function timed<T>(f: () => Promise<T> | T): Promise<[number, T]> { const t = performance.now(); const r = await f(); return [performance.now() - t, r]; }

function generate(root: string) {
  const line = (i: number, j: number) => `export const value_${i}_${j} = ${JSON.stringify(randomBytes(12).toString('hex'))};\n`;
  for (let i = 0; i < FILES; i++) {
    const dir = path.join(root, 'src', `m${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `f${i}.ts`), Array.from({ length: 20 }, (_, j) => line(i, j)).join(''));
  }
  for (let i = 0; i < IGNORED; i++) {
    const dir = path.join(root, 'node_modules', `pkg${Math.floor(i / 50)}`, 'lib');
    if (i % 50 === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `m${i}.js`), `module.exports = ${i};\n`);
  }
  writeFileSync(path.join(root, '.gitignore'), 'node_modules/\n');
}

async function main() {
  const db = await openDatabase();
  const scratch = await createScratchDatabase(db.url, 'gw_bench');
  const sql = connect(scratch.url, { max: 10 });
  const root = mkdtempSync(path.join(tmpdir(), 'gw-bench-'));
  let app: ReturnType<typeof buildApp> | null = null;
  let host: ReferenceHost | null = null;
  try {
    await migrate(sql);
    app = buildApp({ sql, gateway: { sweepIntervalMs: 0, retentionIntervalMs: 0 } });
    await app.start();
    const hostToken = (await createToken(sql, { role: 'host' })).secret;
    const readerToken = (await createToken(sql, { role: 'reader' })).secret;
    const adminToken = (await createToken(sql, { role: 'admin' })).secret;
    host = new ReferenceHost({ url: app.url, token: hostToken, leaseMs: 600_000 });
    await host.start();
    const res = await fetch(app.url, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ query: 'mutation { createSession(input: { title: "bench", directory: "/bench" }) { ... on Session { id } } }' }),
    });
    const sessionID = ((await res.json()) as any).data.createSession.id as string;

    const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
    console.log(`load average at start (1/5/15 min): ${load()}`);
    let [ms] = await timed(() => generate(root));
    console.log(`generated ${FILES} files + ${IGNORED} ignored in node_modules: ${fmt(ms)}`);
    const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
    const git = (...args: string[]) => execFileSync('git', args, { cwd: root, env: gitEnv, stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 26 }).toString();
    [ms] = await timed(() => { git('init', '-q'); git('add', '-A'); git('commit', '-q', '--no-verify', '-m', 'init'); });
    console.log(`git init + add + commit: ${fmt(ms)}`);
    // Cached hashes of files modified within 2 s of their caching are not trusted (racy clean), as in git.
    await new Promise((r) => setTimeout(r, 2_100));

    const first = new WorktreeCapturer();
    const [firstMs, firstSnap] = await timed(() => first.snapshot(host!.client, sessionID, root, host!.id));
    console.log(`first capture + upload: ${fmt(firstMs)} (${firstSnap.uploaded} contents, ${(firstSnap.uploadedBytes / 1e6).toFixed(1)} MB uploaded; ` +
      `walk+hash ${fmt(firstSnap.capture.stats.ms)}, ${firstSnap.capture.stats.ignoredEntries} ignored entries fingerprinted)`);

    const cold: number[] = [], coldWalk: number[] = [], coldUploads: number[] = [];
    for (let i = 0; i < 3; i++) {
      const c = new WorktreeCapturer();
      const [t, s] = await timed(() => c.snapshot(host!.client, sessionID, root, host!.id));
      cold.push(t); coldWalk.push(s.capture.stats.ms); coldUploads.push(s.uploaded);
    }
    // Warm captures: `first` sends deltas (it made a snapshot of this session before); `whole`, with a
    // hash cache warmed by one capture, sends the whole manifest every time. Interleaved, so machine
    // load falls on both alike.
    const whole = new WorktreeCapturer({ deltas: false });
    await whole.snapshot(host!.client, sessionID, root, host!.id);
    const warm: number[] = [], warmWalk: number[] = [], warmUploads: number[] = [], warmHashed: number[] = [], warmSent: string[] = [];
    const full: number[] = [], fullWalk: number[] = [];
    let manifestBytes = 0, deltaBytes = 0;
    for (let i = 0; i < 5; i++) {
      const [t, s] = await timed(() => first.snapshot(host!.client, sessionID, root, host!.id));
      if (!s.delta) throw new Error('bench: the warm capture did not send a delta');
      warm.push(t); warmWalk.push(s.capture.stats.ms); warmUploads.push(s.uploaded); warmHashed.push(s.capture.stats.hashed);
      warmSent.push(`${s.delta.files}+${s.delta.removed}`);
      deltaBytes = JSON.stringify({ base: s.delta.base, files: [], removed: [] }).length;
      const [tf, sf] = await timed(() => whole.snapshot(host!.client, sessionID, root, host!.id));
      if (sf.delta) throw new Error('bench: deltas: false sent a delta');
      full.push(tf); fullWalk.push(sf.capture.stats.ms);
      manifestBytes = JSON.stringify(sf.capture.files).length;
    }
    const gitStatus: number[] = [];
    for (let i = 0; i < 5; i++) gitStatus.push((await timed(() => git('status', '--porcelain')))[0]);
    console.log(`cold capture (new capturer, contents already held): median ${fmt(median(cold))} total, walk+hash ${fmt(median(coldWalk))}, uploads ${coldUploads.join('/')}`);
    console.log(`warm capture (same capturer, manifest sent as a delta): median ${fmt(median(warm))} total (walk ${fmt(median(warmWalk))}, ` +
      `delta createSnapshot the rest), files re-hashed ${warmHashed.join('/')}, uploads ${warmUploads.join('/')}, ` +
      `entries sent (changed+removed) ${warmSent.join('/')}, ~${deltaBytes} bytes of manifest input`);
    console.log(`warm capture forced to whole manifests (deltas: false, same run, interleaved): median ${fmt(median(full))} total ` +
      `(walk ${fmt(median(fullWalk))}, manifest upload + createSnapshot the rest, ${(manifestBytes / 1e6).toFixed(2)} MB of manifest input)`);
    console.log(`git status --porcelain: median ${fmt(median(gitStatus))}`);
    console.log(`ratio warm capture / git status: total ${(median(warm) / median(gitStatus)).toFixed(1)}x with deltas, ` +
      `${(median(full) / median(gitStatus)).toFixed(1)}x with whole manifests; walk only ${(median(warmWalk) / median(gitStatus)).toFixed(1)}x`);

    // ---- freeze ----
    // Under heavy machine load an idle keep-alive socket can be reset; retry such a request once.
    const retry = async <T>(f: () => Promise<T>): Promise<T> => { try { return await f(); } catch (e: any) { if (e?.cause?.code !== 'ECONNRESET') throw e; return f(); } };
    const settleWith = async (edit: () => void) => {
      const start = await retry(() => first.snapshot(host!.client, sessionID, root, host!.id));
      const e: any = await host!.beginExecution(sessionID, 'PROMPT', { startSnapshot: start.id });
      edit();
      const end = await retry(() => first.snapshot(host!.client, sessionID, root, host!.id));
      const [t] = await timed(() => host!.settleExecution(e.id, 'SUCCEEDED', { endSnapshot: end.id }));
      return { t, id: e.id as string };
    };
    const empty: number[] = [], changed: number[] = [];
    let changedID = '';
    for (let r = 0; r < 3; r++) {
      empty.push((await settleWith(() => {})).t);
      const x = await settleWith(() => {
        for (let i = 0; i < CHANGED; i++) {
          const f = path.join(root, 'src', `m${Math.floor(i * (FILES / CHANGED) / 100)}`, `f${Math.floor(i * (FILES / CHANGED))}.ts`);
          writeFileSync(f, `// edit ${r}\n` + execFileSync('head', ['-n', '19', f]).toString());
        }
      });
      changed.push(x.t);
      changedID = x.id;
    }
    const [row] = await sql`SELECT file_count, patch_bytes, coverage FROM changesets WHERE execution_id = ${changedID}`;
    console.log(`freeze (settleExecution) of ${row.fileCount} changed files (${(Number(row.patchBytes) / 1e3).toFixed(0)} KB of patches, ${row.coverage}): ` +
      `median ${fmt(median(changed))}; settle with an empty changeset (same ${FILES}-file manifests): ${fmt(median(empty))}; ` +
      `freeze cost ≈ ${fmt(median(changed) - median(empty))}`);

    // ---- read throughput ----
    const query = JSON.stringify({
      query: 'query($id: ID!) { execution(id: $id) { changeset { coverage { __typename ... on CoverageComplete { fileCount } } files { path status patch } patch } } }',
      variables: { id: changedID },
    });
    const check = await (await fetch(app.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${readerToken}` }, body: query })).json() as any;
    if (check.data.execution.changeset.files.length !== row.fileCount) throw new Error('bench: read check failed');
    const responseBytes = JSON.stringify(check).length;
    const loop = async (one: () => Promise<void>) => {
      let n = 0;
      const end = performance.now() + SECONDS * 1000;
      await Promise.all(Array.from({ length: CLIENTS }, async () => { while (performance.now() < end) { await one(); n++; } }));
      return n / SECONDS;
    };
    const gqlRps = await loop(async () => {
      const r = await fetch(app!.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${readerToken}` }, body: query });
      await r.text();
    });
    const trivial = JSON.stringify({ query: 'query($id: ID!) { execution(id: $id) { id } }', variables: { id: changedID } });
    const trivialRps = await loop(async () => {
      const r = await fetch(app!.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${readerToken}` }, body: trivial });
      await r.text();
    });
    const raw = connect(scratch.url, { max: 10 });
    const rawRps = await loop(async () => {
      await raw`SELECT e.* FROM executions e JOIN sessions s ON s.id = e.session_id WHERE e.id = ANY(${[changedID]})`;
      await raw`SELECT * FROM changesets WHERE execution_id = ANY(${[changedID]})`;
      await raw`SELECT f.execution_id, f.ord, f.path, f.status, f.additions, f.deletions, f.binary, f.patch
        FROM changeset_files f JOIN changesets c ON c.execution_id = f.execution_id
        WHERE f.execution_id = ANY(${[changedID]}) AND c.pruned_at IS NULL ORDER BY f.execution_id, f.ord`;
    });
    await raw.end();
    console.log(`read throughput, ${CLIENTS} clients, ${row.fileCount}-file changeset (${(responseBytes / 1e3).toFixed(0)} KB response): ` +
      `gateway ${gqlRps.toFixed(0)} req/s, same SQL through postgres.js ${rawRps.toFixed(0)} req/s, ratio ${(gqlRps / rawRps).toFixed(2)}; ` +
      `for scale, \`execution(id) { id }\` through the gateway: ${trivialRps.toFixed(0)} req/s`);
    console.log(`load average at end (1/5/15 min): ${load()}`);
  } finally {
    await host?.stop().catch(() => {});
    await app?.stop().catch(() => {});
    await sql.end({ timeout: 1 });
    await scratch.drop();
    try { rmSync(root, { recursive: true, force: true, maxRetries: 3 }); } catch (e) { console.error('cleanup:', (e as Error).message); }
    await db.stop();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
