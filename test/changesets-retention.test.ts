import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomBytes, createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { applyPatch } from 'diff';
import { startTestGateway, type TestGateway } from './harness.js';
import { readJournal } from '../domain/journal.js';
import { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { changesetKit, errorOf, write } from './support/changeset-kit.js';
import { connect } from '../db/connection.js';
import { setPolicy } from '../domain/snapshots.js';
import { pruneChangesets } from '../domain/changesets.js';

let g: TestGateway;
let host: ReferenceHost;
const dirs: string[] = [];

beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 }); // no lease sweeper in the counted pool
  host = new ReferenceHost({ url: g.url, token: await g.token('host') });
  await host.start();
});
afterAll(async () => {
  await host?.stop();
  await g?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const { worktree, newSession, read, runExecution, count } = changesetKit(() => ({ g, host }), dirs);
let hostTok: string | null = null;
async function hostToken() { return (hostTok ??= await g.token('host')); }

describe('large changes', () => {
  it('a 2.6 MB patch is reported TRUNCATED under the default budget, and stored whole under a larger one', async () => {
    const sessionID = await newSession();
    const lines = (tag: string) => Array.from({ length: 20_000 }, (_, i) => `${tag} ${i} ${'-'.repeat(56)}`).join('\n') + '\n';
    const root = worktree({ 'huge.txt': lines('old') });
    const cap = new WorktreeCapturer({ maxFileBytes: 8 * 1024 * 1024 });
    const e1 = await runExecution(sessionID, root, cap, () => write(root, 'huge.txt', lines('new')));
    const x1 = await read(e1.id);
    expect(x1.changeset.coverage.omissions).toEqual([{ path: 'huge.txt', reason: 'TRUNCATED', detail: expect.stringMatching(/per-file budget/) }]);
    expect(x1.changeset.files[0]).toMatchObject({ path: 'huge.txt', patch: null, additions: 20_000, deletions: 20_000 });

    await setPolicy(g.sql, { filePatchBytes: 8 * 1024 * 1024, changesetPatchBytes: 16 * 1024 * 1024 });
    try {
      const e2 = await runExecution(sessionID, root, cap, () => write(root, 'huge.txt', lines('newer')));
      const x2 = await read(e2.id);
      expect(x2.changeset.coverage.__typename).toBe('CoverageComplete');
      const patch: string = x2.changeset.patch;
      expect(Buffer.byteLength(patch)).toBeGreaterThan(2.6e6);
      expect(applyPatch(lines('new'), patch.split('\n').slice(1).join('\n'))).toBe(lines('newer'));
      expect((await read(e2.id)).changeset.patch).toBe(patch);
    } finally {
      await setPolicy(g.sql, { filePatchBytes: 1_048_576, changesetPatchBytes: 8_388_608 });
    }
  });});

describe('storage and retention', () => {
  it('100 executions over the same 1 MB file store it once and upload it once', async () => {
    const content = randomBytes(768 * 1024).toString('base64'); // 1 MiB of text
    const hash = createHash('sha256').update(content).digest('hex');
    const bytesOf = async () => Number((await g.sql`SELECT coalesce(sum(length(data)), 0) AS b FROM contents`)[0].b);
    const before = await bytesOf();
    // On Citus the coordinator's `contents` is an empty shell: the size is that of its shards.
    const relSize = async () => Number((await (inject('citus')
      ? g.sql`SELECT citus_total_relation_size('contents') AS b`
      : g.sql`SELECT pg_total_relation_size('contents') AS b`))[0].b);
    const relBefore = await relSize();
    // 4 sessions (hosts with their own capturers) × 25 executions, in parallel; each execution
    // starts from the previous one's end snapshot, as a host does.
    const uploaded = await Promise.all(Array.from({ length: 4 }, async () => {
      const sessionID = await newSession();
      const root = worktree({ 'data.txt': content });
      const cap = new WorktreeCapturer();
      let prev = await cap.snapshot(host.client, sessionID, root, host.id);
      let bytes = prev.uploadedBytes;
      for (let i = 0; i < 25; i++) {
        const e: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: prev.id });
        const end = await cap.snapshot(host.client, sessionID, root, host.id);
        bytes += end.uploadedBytes;
        await host.settleExecution(e.id, 'SUCCEEDED', { endSnapshot: end.id });
        prev = end;
      }
      return { bytes, sessionID };
    }));
    // Uploaded at most once per capturer that raced the first upload, stored exactly once.
    expect(uploaded.reduce((a, b) => a + b.bytes, 0)).toBeLessThanOrEqual(4 * content.length);
    expect(uploaded.filter((b) => b.bytes > 0).length).toBeGreaterThanOrEqual(1);
    const [row] = await g.sql`SELECT count(*) AS n FROM contents WHERE hash = ${hash}`;
    expect(Number(row.n)).toBe(1);
    expect(await bytesOf() - before).toBe(content.length);
    const relAfter = await relSize();
    expect(relAfter - relBefore).toBeLessThan(1.5 * content.length);
    const ids = uploaded.map((u) => u.sessionID);
    const [cs] = await g.sql`SELECT count(*) AS n, count(*) FILTER (WHERE c.coverage = 'COMPLETE') AS complete
      FROM changesets c WHERE c.session_id = ANY(${ids})`;
    const [files] = await g.sql`SELECT count(*) AS n FROM changeset_files f WHERE f.session_id = ANY(${ids})`;
    expect([Number(cs.n), Number(cs.complete), Number(files.n)]).toEqual([100, 100, 0]); // 100 frozen, nothing changed
    // Parallel uploads of one new content: stored once, no error.
    const fresh = randomBytes(5_000).toString('base64');
    const fh = createHash('sha256').update(fresh).digest('hex');
    const rs = await Promise.all(Array.from({ length: 20 }, async () => g.gql(
      `mutation($input: UploadContentsInput!) { uploadContents(input: $input) { __typename ... on ContentsUploaded { stored } } }`,
      { input: { contents: [{ hash: fh, base64: Buffer.from(fresh).toString('base64') }] } }, await hostToken())));
    expect(rs.map((r) => r.data.uploadContents.__typename)).toEqual(Array(20).fill('ContentsUploaded'));
    expect(rs.reduce((n, r) => n + r.data.uploadContents.stored, 0)).toBe(1);
  });

  it('prunes only after the next execution settled, once across instances, and reads EXPIRED afterwards', async () => {
    await setPolicy(g.sql, { retainMs: 0, retainExecutions: 0, graceMs: 0 });
    const other = connect(g.dbUrl, { max: 4 });
    try {
      // Leave nothing else prunable from other tests in this database.
      await pruneChangesets(g.sql);
      const sessionID = await newSession();
      const root = worktree({ 'a.txt': 'unique-' + randomBytes(8).toString('hex') + '\n' });
      const cap = new WorktreeCapturer();
      const e1 = await runExecution(sessionID, root, cap, () => write(root, 'a.txt', 'second\n'));
      const frozen = await read(e1.id);
      const s2 = await cap.snapshot(host.client, sessionID, root, host.id);
      const e2: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: s2.id });
      // E2 is running: E1 must stay complete, whatever instance prunes.
      await Promise.all([pruneChangesets(g.sql), pruneChangesets(other)]);
      expect(await read(e1.id)).toEqual(frozen);
      write(root, 'a.txt', 'third\n');
      const s3 = await cap.snapshot(host.client, sessionID, root, host.id);
      await host.settleExecution(e2.id, 'SUCCEEDED', { endSnapshot: s3.id });
      const e2frozen = await read(e2.id);
      const runs = await Promise.all([pruneChangesets(g.sql), pruneChangesets(other), pruneChangesets(other), pruneChangesets(g.sql)]);
      expect(runs.reduce((n, r) => n + r.changesets, 0)).toBe(1);
      // The pruning is an event of the session's journal (what sessionEvents streams), naming the execution, once.
      const pruned = (await readJournal(g.sql, sessionID, 0)).filter((e) => e.type === 'changeset.pruned');
      expect(pruned.map((e) => e.payload)).toEqual([{ executionID: e1.id }]);
      const x = await read(e1.id);
      expect(x.status).toBe('SUCCEEDED');
      expect(x.boundary).toMatchObject({ __typename: 'BoundaryUnavailable', reason: 'EXPIRED' });
      expect(x.changeset).toMatchObject({ coverage: { __typename: 'CoverageUnavailable', reason: 'EXPIRED' }, files: [], patch: null });
      // E2 (no next execution yet) is untouched; E1's unique start content is gone.
      expect(await read(e2.id)).toEqual(e2frozen);
      const firstHash = (await g.sql`SELECT count(*) AS n FROM contents WHERE data = convert_to(${readFileSync(path.join(root, 'a.txt'), 'utf8')}, 'UTF8')`)[0];
      expect(Number(firstHash.n)).toBe(1); // the current content is still referenced by E2's end snapshot
      const startOfE1 = await g.sql`SELECT manifest, pruned_at FROM snapshots WHERE id = ${e1.start.id}`;
      expect(startOfE1[0].manifest).toBeNull();
      // A pruned snapshot cannot become a boundary.
      const err = await errorOf(host.beginExecution(sessionID, 'PROMPT', { startSnapshot: e1.start.id }));
      expect(err).toMatchObject({ _tag: 'InvalidRequestError', field: 'startSnapshot' });
    } finally {
      await other.end({ timeout: 1 });
      await setPolicy(g.sql, { retainMs: 2_592_000_000, retainExecutions: 10, graceMs: 3_600_000 });
    }
  });

  it('settles and snapshots racing the retention sweep never lose a content they checked', async () => {
    // Grace covers the moments between a capture and its use as a boundary (unused snapshots).
    await setPolicy(g.sql, { retainMs: 0, retainExecutions: 0, graceMs: 60_000 });
    let stop = false;
    try {
      const sessions = await Promise.all(Array.from({ length: 4 }, () => newSession()));
      const sweeper = (async () => { let n = 0; while (!stop) { await pruneChangesets(g.sql); n++; } return n; })();
      await Promise.all(sessions.map(async (sessionID, k) => {
        const root = worktree({ 'f.txt': `${k}\n` });
        const cap = new WorktreeCapturer();
        for (let i = 0; i < 4; i++) {
          const e = await runExecution(sessionID, root, cap, () => write(root, 'f.txt', `${k}-${i}-${randomBytes(4).toString('hex')}\n`));
          const x = await read(e.id);
          // Either still frozen with its edit, or (once its successor settled) expired: never half.
          if (x.changeset.coverage.__typename === 'CoverageComplete') expect(x.changeset.files).toHaveLength(1);
          else expect(x.changeset.coverage.reason).toBe('EXPIRED');
        }
      }));
      stop = true;
      expect(await sweeper).toBeGreaterThan(0);
    } finally {
      stop = true; // a failure above must not leave the sweeper running into the next tests
      await setPolicy(g.sql, { retainMs: 2_592_000_000, retainExecutions: 10, graceMs: 3_600_000 });
    }
  });
});
