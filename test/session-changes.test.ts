import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readFileSync, rmSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { applyPatch } from 'diff';
import { startTestGateway, type TestGateway } from './harness.js';
import { requestsKit } from './support/requests-kit.js';
import { changesetKit, write } from './support/changeset-kit.js';
import { lapseLease, ok, registerHost } from './fixtures.js';
import { sweepExpiredLeases } from '../domain/hosts.js';
import { GatewayClient } from '../client/index.js';
import type { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { setPolicy } from '../domain/snapshots.js';
import { pruneChangesets } from '../domain/changesets.js';
import { SYSTEM } from '../domain/access.js';
import { incompleteExecutionsBetween, snapshotChangesetFiles, snapshotChangesetFilesAt, snapshotChangesetRows } from '../domain/snapshot-changes.js';
import { previousExecution } from '../resolvers/loaders.js';
import type { Context } from '../resolvers/context.js';

/**
 * Session.changes (a range of executions, start boundary of `from` to end boundary of `to`) and
 * Execution.driftBefore (previous end boundary to this start boundary), through the GraphQL server on a
 * real Postgres: computed from the stored snapshots, stored once, typed errors for bad arguments.
 */

let g: TestGateway;
let kit: Awaited<ReturnType<typeof requestsKit>>;
let host: ReferenceHost;
const dirs: string[] = [];

beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  kit = await requestsKit(g);
  host = await kit.host();
});
afterAll(async () => {
  await kit?.dispose();
  await g?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const { worktree, runExecution, read } = changesetKit(() => ({ g, host }), dirs);

const COVERAGE = `coverage { __typename
  ... on CoverageComplete { fileCount incompleteExecutions { id sequence } }
  ... on CoverageOmitted { omissions { path reason } incompleteExecutions { id sequence } }
  ... on CoverageUnavailable { reason detail incompleteExecutions { id sequence } } }`;
const BOUNDARY = `boundary { __typename ... on SnapshotBoundary { start { id } end { id } } ... on BoundaryUnavailable { reason } }`;
const CHANGES = `query($s: ID!, $from: ID!, $to: ID!) { session(id: $s) { changes(from: $from, to: $to) {
  __typename
  ... on Changeset { execution { id } ${BOUNDARY} fileCount additions deletions patch ${COVERAGE} files { path status additions deletions binary patch } }
  ... on ExecutionNotFoundError { executionID message }
  ... on InvalidRequestError { field message } } } }`;
const DRIFT = `query($id: ID!) { execution(id: $id) { id driftBefore { execution { id } ${BOUNDARY} fileCount ${COVERAGE} files { path status patch } } } }`;

async function changes(sessionID: string, from: string, to: string, token?: string) {
  const r = await g.gql(CHANGES, { s: sessionID, from, to }, token);
  expect(r.errors).toBeUndefined();
  return r.data.session?.changes ?? null;
}
async function drift(executionID: string) {
  const r = await g.gql(DRIFT, { id: executionID });
  expect(r.errors).toBeUndefined();
  return r.data.execution.driftBefore;
}
async function newSession(directory = '/work/changes'): Promise<string> {
  const r = await g.gql(`mutation($d: String!) { createSession(input: { title: "changes", directory: $d }) { ... on Session { id } } }`, { d: directory });
  return r.data.createSession.id;
}
const text = (root: string, p: string) => readFileSync(path.join(root, p), 'utf8');
/** Applies a file's patch (git header lines dropped) to its old text. */
const apply = (old: string, patch: string) => {
  const out = applyPatch(old, patch.split('\n').filter((l) => !/^(diff --git|new file mode|deleted file mode|old mode|new mode)/.test(l)).join('\n'));
  if (out === false) throw new Error('the patch does not apply');
  return out;
};

describe('Session.changes', () => {
  it('a range of three executions is the composition of their changesets, from stored snapshots; one execution is its own changeset', async () => {
    const sessionID = await newSession();
    const root = worktree({ 'a.txt': 'one\ntwo\nthree\n', 'c.txt': 'gone soon\n' });
    const cap = new WorktreeCapturer();
    const e1 = await runExecution(sessionID, root, cap, () => write(root, 'a.txt', 'one\nTWO\nthree\n'));
    const e2 = await runExecution(sessionID, root, cap, () => { write(root, 'a.txt', 'one\nTWO\nthree\nfour\n'); write(root, 'b.txt', 'new\n'); });
    const e3 = await runExecution(sessionID, root, cap, () => unlinkSync(path.join(root, 'c.txt')));
    rmSync(root, { recursive: true, force: true }); // nothing below reads the live worktree

    const r = await changes(sessionID, e1.id, e3.id);
    expect(r.__typename).toBe('Changeset');
    expect(r.execution.id).toBe(e3.id);
    expect(r.boundary).toEqual({ __typename: 'SnapshotBoundary', start: { id: e1.start.id }, end: { id: e3.end.id } });
    expect(r.coverage).toEqual({ __typename: 'CoverageComplete', fileCount: 3, incompleteExecutions: [] });
    expect(r.files.map((f: any) => [f.path, f.status])).toEqual([['a.txt', 'MODIFIED'], ['b.txt', 'ADDED'], ['c.txt', 'DELETED']]);
    const byPath = Object.fromEntries(r.files.map((f: any) => [f.path, f]));
    // Composition: the range's patch of a.txt takes the start content to the end content, as E1's then E2's do.
    const own = await Promise.all([e1, e2, e3].map((e) => read(e.id)));
    const stepwise = apply(apply('one\ntwo\nthree\n', own[0].changeset.files[0].patch), own[1].changeset.files.find((f: any) => f.path === 'a.txt').patch);
    expect(apply('one\ntwo\nthree\n', byPath['a.txt'].patch)).toBe(stepwise);
    expect(stepwise).toBe('one\nTWO\nthree\nfour\n');
    expect(byPath['b.txt']).toEqual(own[1].changeset.files.find((f: any) => f.path === 'b.txt'));
    expect(byPath['c.txt']).toEqual(own[2].changeset.files[0]);
    expect(r.patch).toBe(r.files.map((f: any) => f.patch).join(''));
    expect([r.additions, r.deletions]).toEqual([3, 2]);

    // A range of two; one execution: exactly its own frozen changeset.
    const r12 = await changes(sessionID, e1.id, e2.id);
    expect(r12.files.map((f: any) => f.path)).toEqual(['a.txt', 'b.txt']);
    for (const [i, e] of [e1, e2, e3].entries()) {
      const one = await changes(sessionID, e.id, e.id);
      const { changeset } = own[i];
      expect(one).toMatchObject({ fileCount: changeset.fileCount, additions: changeset.additions, deletions: changeset.deletions, patch: changeset.patch, files: changeset.files });
      expect(one.coverage).toEqual({ ...changeset.coverage, incompleteExecutions: [] });
      expect(one.boundary).toEqual({ __typename: 'SnapshotBoundary', start: { id: e.start.id }, end: { id: e.end.id } });
    }

    // file(path): one file of the range, by path.
    const f = await g.gql(`query($s: ID!, $a: ID!, $b: ID!) { session(id: $s) { changes(from: $a, to: $b) { ... on Changeset { file(path: "b.txt") { path status patch } none: file(path: "zzz") { path } } } } }`,
      { s: sessionID, a: e1.id, b: e3.id });
    expect(f.data.session.changes).toEqual({ file: { path: 'b.txt', status: 'ADDED', patch: byPath['b.txt'].patch }, none: null });
  });

  it('is stored once: a second read reads the stored rows, no manifest and no content', async () => {
    const sessionID = await newSession();
    const root = worktree({ 'x.txt': 'x\n' });
    const cap = new WorktreeCapturer();
    const e1 = await runExecution(sessionID, root, cap, () => write(root, 'x.txt', 'x\ny\n'));
    const e2 = await runExecution(sessionID, root, cap, () => write(root, 'z.txt', 'z\n'));
    const stored = async () => (await g.sql`SELECT count(*)::int AS n FROM snapshot_changesets WHERE session_id = ${sessionID}`)[0].n;
    expect(await stored()).toBe(0);

    g.queries.reset();
    const first = await changes(sessionID, e1.id, e2.id);
    const firstLog = g.queries.requestLog();
    expect(firstLog.some((q) => /FROM contents/.test(q))).toBe(true);
    expect(await stored()).toBe(1);
    const [row] = await g.sql`SELECT file_count, additions, coverage FROM snapshot_changesets WHERE session_id = ${sessionID}`;
    expect(row).toEqual({ fileCount: 2, additions: 2, coverage: 'COMPLETE' });

    g.queries.reset();
    const second = await changes(sessionID, e1.id, e2.id);
    const secondLog = g.queries.requestLog();
    expect(second).toEqual(first);
    expect(secondLog.filter((q) => /manifest|FROM contents|INSERT/.test(q))).toEqual([]);
    // The session, the two executions, (in one wave) the stored row, its files and the range's incomplete
    // executions, and the two boundary snapshots the selection reads (one statement).
    expect(secondLog.map((q) => /FROM (\w+)/.exec(q)?.[1]).sort()).toEqual(['executions', 'executions', 'sessions', 'snapshot_changeset_files', 'snapshot_changesets', 'snapshots']);
    expect(secondLog.length).toBeLessThan(firstLog.length);
    // Every statement but the session's own names the session (on a cluster: its shard alone).
    expect(secondLog.filter((q) => !/FROM sessions WHERE id = \$1/.test(q) && !/session_id" = \$1|session_id = \$\d/.test(q))).toEqual([]);
    expect(await stored()).toBe(1);

    // Concurrent first reads of a pair not stored yet (the drift before E2) store it once and answer alike.
    const drifts = await Promise.all(Array.from({ length: 6 }, () => drift(e2.id)));
    for (const d of drifts) expect(d).toEqual(drifts[0]);
    expect(await stored()).toBe(2);

    // Removing the session removes what was stored for it.
    const removed = await g.gql(`mutation($s: ID!) { removeSession(input: { sessionID: $s }) { __typename } }`, { s: sessionID });
    expect(removed.data.removeSession.__typename).toBe('SessionRemoved');
    expect(await stored()).toBe(0);
    expect((await g.sql`SELECT count(*)::int AS n FROM snapshot_changeset_files WHERE session_id = ${sessionID}`)[0].n).toBe(0);
  });

  it.skipIf(!inject('citus'))('on Citus, the stored rows, their files, the incomplete executions and the previous execution are read on the session\'s shard alone', async () => {
    const sessionID = await newSession();
    const root = worktree({ 'x.txt': 'x\n' });
    const cap = new WorktreeCapturer();
    const e1 = await runExecution(sessionID, root, cap, () => write(root, 'x.txt', 'y\n'));
    const e2 = await runExecution(sessionID, root, cap, () => write(root, 'x.txt', 'z\n'));
    expect((await changes(sessionID, e1.id, e2.id)).fileCount).toBe(1);
    const [placed] = await g.sql`SELECT count(*)::int AS n FROM pg_dist_partition WHERE logicalrelid::text IN ('snapshot_changesets', 'snapshot_changeset_files')`;
    expect(placed.n).toBe(2);
    const pair = { sessionId: sessionID, startSnapshotId: e1.start.id, endSnapshotId: e2.end.id };
    const sent: { query: string; params: unknown[] }[] = [];
    const spy = postgres(g.dbUrl, { max: 1, onnotice: () => {}, transform: { column: { from: postgres.toCamel } }, debug: (_c, query, params) => { sent.push({ query, params }); } });
    const reads: Record<string, () => Promise<unknown>> = {
      rows: () => snapshotChangesetRows(spy, [pair]),
      files: () => snapshotChangesetFiles(spy, [pair], true),
      file: () => snapshotChangesetFilesAt(spy, [{ ...pair, path: 'x.txt' }]),
      incomplete: () => incompleteExecutionsBetween(spy, [{ sessionId: sessionID, from: 1, to: 2 }]),
      previous: () => previousExecution({ sql: spy, actor: SYSTEM } as unknown as Context).load({ sessionId: sessionID, sequence: 2 }),
    };
    const tasks: Record<string, number[]> = {};
    try {
      for (const [name, read] of Object.entries(reads)) {
        await read();
        sent.length = 0;
        expect(await read()).toBeTruthy();
        expect(sent).toHaveLength(1);
        const plan = await spy.unsafe(`EXPLAIN ${sent[0].query}`, sent[0].params as never[]);
        tasks[name] = plan.flatMap((r) => /Task Count: (\d+)/.exec(String(Object.values(r)[0]))?.[1] ?? []).map(Number);
      }
    } finally {
      await spy.end();
    }
    expect(tasks).toEqual(Object.fromEntries(Object.keys(reads).map((k) => [k, [1]])));
  });

  it('typed errors: unknown IDs, executions of another session, a reversed range', async () => {
    const s1 = await newSession();
    const s2 = await newSession();
    const root = worktree({ 'a.txt': 'a\n' });
    const cap = new WorktreeCapturer();
    const a1 = await runExecution(s1, root, cap, () => write(root, 'a.txt', 'b\n'));
    const a2 = await runExecution(s1, root, cap, () => write(root, 'a.txt', 'c\n'));
    const b1 = await runExecution(s2, root, cap, () => write(root, 'a.txt', 'd\n'));

    const missing = 'exe_0000000000000missing0000';
    expect(await changes(s1, missing, a2.id)).toMatchObject({ __typename: 'ExecutionNotFoundError', executionID: missing });
    expect(await changes(s1, a1.id, 'not-an-id')).toMatchObject({ __typename: 'ExecutionNotFoundError', executionID: 'not-an-id' });
    expect(await changes(s1, b1.id, a2.id)).toMatchObject({ __typename: 'InvalidRequestError', field: 'from', message: expect.stringContaining('another session') });
    expect(await changes(s1, a1.id, b1.id)).toMatchObject({ __typename: 'InvalidRequestError', field: 'to' });
    expect(await changes(s1, a2.id, a1.id)).toMatchObject({ __typename: 'InvalidRequestError', field: 'to', message: expect.stringContaining('comes before') });
  });

  it('scoped tokens: an execution or session outside the scope reads like a missing one', async () => {
    const inA = await newSession('/scoped/a');
    const inB = await newSession('/scoped/b');
    const root = worktree({ 'a.txt': 'a\n' });
    const cap = new WorktreeCapturer();
    const a1 = await runExecution(inA, root, cap, () => write(root, 'a.txt', 'b\n'));
    const a2 = await runExecution(inA, root, cap, () => write(root, 'a.txt', 'c\n'));
    const b1 = await runExecution(inB, root, cap, () => write(root, 'a.txt', 'd\n'));
    const reader = await g.token('reader', '/scoped/a');

    expect((await changes(inA, a1.id, a2.id, reader)).files.map((f: any) => f.path)).toEqual(['a.txt']);
    // B's execution: not found, exactly as an ID that does not exist (an unscoped caller is told it is another session's).
    const missing = 'exe_0000000000000missing0000';
    const out = await changes(inA, b1.id, a2.id, reader);
    const none = await changes(inA, missing, a2.id, reader);
    expect(JSON.stringify(out).split(b1.id).join('<id>')).toBe(JSON.stringify(none).split(missing).join('<id>'));
    expect((await changes(inA, b1.id, a2.id)).__typename).toBe('InvalidRequestError');
    // B's session: null, as a missing session.
    expect(await changes(inB, b1.id, b1.id, reader)).toBeNull();
    expect(await changes(inB, b1.id, b1.id)).toMatchObject({ __typename: 'Changeset' });
  });

  it('missing boundaries: unavailable with the reason, and the executions whose changesets are not complete', async () => {
    const sessionID = await newSession();
    const root = worktree({ 'a.txt': 'a\n', '.gitignore': '*.log\n' });
    const cap = new WorktreeCapturer();
    const e1 = await runExecution(sessionID, root, cap, () => write(root, 'a.txt', 'b\n'));
    // E2: no start snapshot (START_NOT_CAPTURED), an end one.
    const e2: any = await host.beginExecution(sessionID, 'PROMPT');
    write(root, 'a.txt', 'c\n');
    await host.settleExecution(e2.id, 'SUCCEEDED', { endSnapshot: (await cap.snapshot(host.client, sessionID, root, host.id)).id });
    // E3: an ignored path changes (its own changeset is OMITTED).
    const e3 = await runExecution(sessionID, root, cap, () => write(root, 'build.log', 'log\n'));
    // E4: no end snapshot.
    const e4: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: (await cap.snapshot(host.client, sessionID, root, host.id)).id });
    await host.settleExecution(e4.id, 'SUCCEEDED');

    const ref = (e: { id: string }, sequence: number) => ({ id: e.id, sequence });
    // The start boundary of E2 is missing.
    const r23 = await changes(sessionID, e2.id, e3.id);
    expect(r23.coverage).toMatchObject({ __typename: 'CoverageUnavailable', reason: 'BOUNDARY_UNAVAILABLE', detail: expect.stringContaining('START_NOT_CAPTURED') });
    expect(r23.coverage.incompleteExecutions).toEqual([ref(e2, 2), ref(e3, 3)]);
    expect(r23.boundary).toEqual({ __typename: 'BoundaryUnavailable', reason: 'START_NOT_CAPTURED' });
    expect([r23.files, r23.patch, r23.fileCount]).toEqual([[], null, 0]);
    // The end boundary of E4 is missing.
    const r14 = await changes(sessionID, e1.id, e4.id);
    expect(r14.coverage).toMatchObject({ __typename: 'CoverageUnavailable', reason: 'BOUNDARY_UNAVAILABLE', detail: expect.stringContaining('END_NOT_CAPTURED') });
    expect(r14.coverage.incompleteExecutions).toEqual([ref(e2, 2), ref(e3, 3), ref(e4, 4)]);
    expect(r14.boundary).toEqual({ __typename: 'BoundaryUnavailable', reason: 'END_NOT_CAPTURED' });
    // Both boundaries exist: the range is exact (and omits the ignored path), though E2's own changeset is unavailable.
    const r13 = await changes(sessionID, e1.id, e3.id);
    expect(r13.coverage).toMatchObject({ __typename: 'CoverageOmitted', omissions: [{ path: 'build.log', reason: 'IGNORED' }] });
    expect(r13.coverage.incompleteExecutions).toEqual([ref(e2, 2), ref(e3, 3)]);
    expect(r13.files.map((f: any) => f.path)).toEqual(['a.txt']);
    expect(apply('a\n', r13.files[0].patch)).toBe('c\n');
    // Drift: E2 has no start boundary, E3's previous (E2) has an end one.
    expect((await drift(e2.id)).coverage).toMatchObject({ __typename: 'CoverageUnavailable', reason: 'BOUNDARY_UNAVAILABLE', detail: expect.stringContaining('START_NOT_CAPTURED') });
    expect((await drift(e3.id)).coverage).toMatchObject({ __typename: 'CoverageComplete', fileCount: 0 });

    // A running execution: its end boundary does not exist yet (NOT_SETTLED); drift before it is known already.
    const e5: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: (await cap.snapshot(host.client, sessionID, root, host.id)).id });
    const r35 = await changes(sessionID, e3.id, e5.id);
    expect(r35.coverage).toMatchObject({ __typename: 'CoverageUnavailable', reason: 'NOT_SETTLED' });
    expect(r35.boundary).toEqual({ __typename: 'BoundaryUnavailable', reason: 'NOT_SETTLED' });
    expect((await drift(e5.id)).coverage).toMatchObject({ __typename: 'CoverageUnavailable', reason: 'BOUNDARY_UNAVAILABLE', detail: expect.stringContaining('END_NOT_CAPTURED') });
    await host.settleExecution(e5.id, 'SUCCEEDED', { endSnapshot: (await cap.snapshot(host.client, sessionID, root, host.id)).id });
  });
});

describe('a lost host', () => {
  it('its abandoned execution has no end boundary: the drift after it reads HOST_LOST, a range across it is whole', async () => {
    const h = await registerHost(g, { leaseMs: 600_000 });
    const client = new GatewayClient({ url: g.url, token: h.token });
    try {
      const sessionID = await newSession();
      const root = worktree({ 'a.txt': 'a\n' });
      const cap = new WorktreeCapturer();
      const beginWith = async (startSnapshot: string) => (await ok(g, `mutation($i: BeginExecutionInput!) { beginExecution(input: $i) { ... on Execution { id } } }`,
        { i: { sessionID, hostID: h.hostID, trigger: 'PROMPT', startSnapshot } }, h.token)).id as string;
      const e1 = await beginWith((await cap.snapshot(client, sessionID, root, h.hostID)).id);
      write(root, 'a.txt', 'lost\n');
      await lapseLease(g.sql, h.hostID);
      expect((await sweepExpiredLeases(g.sql)).abandoned).toBeGreaterThan(0);
      await registerHost(g, { hostID: h.hostID, token: h.token, leaseMs: 600_000 });
      const e2 = await beginWith((await cap.snapshot(client, sessionID, root, h.hostID)).id);
      write(root, 'a.txt', 'done\n');
      await ok(g, `mutation($i: SettleExecutionInput!) { settleExecution(input: $i) { ... on Execution { id } } }`,
        { i: { executionID: e2, status: 'SUCCEEDED', endSnapshot: (await cap.snapshot(client, sessionID, root, h.hostID)).id } }, h.token);

      const d2 = await drift(e2);
      expect(d2.coverage).toMatchObject({ __typename: 'CoverageUnavailable', reason: 'BOUNDARY_UNAVAILABLE', detail: expect.stringContaining('HOST_LOST') });
      expect(d2.boundary).toEqual({ __typename: 'BoundaryUnavailable', reason: 'HOST_LOST' });
      const own = await changes(sessionID, e1, e1);
      expect(own.boundary).toEqual({ __typename: 'BoundaryUnavailable', reason: 'HOST_LOST' });
      expect(own.coverage).toMatchObject({ __typename: 'CoverageUnavailable', reason: 'BOUNDARY_UNAVAILABLE', incompleteExecutions: [{ id: e1, sequence: 1 }] });
      const range = await changes(sessionID, e1, e2);
      expect(range.coverage).toEqual({ __typename: 'CoverageComplete', fileCount: 1, incompleteExecutions: [{ id: e1, sequence: 1 }] });
      expect(apply('a\n', range.files[0].patch)).toBe('done\n');
    } finally {
      await client.close();
    }
  });
});

describe('Execution.driftBefore', () => {
  it('shows what changed between executions (the user editing), is empty when nothing did, and null for the first', async () => {
    const sessionID = await newSession();
    const root = worktree({ 'a.txt': 'a\n', 'notes.md': '# notes\n' });
    const cap = new WorktreeCapturer();
    const e1 = await runExecution(sessionID, root, cap, () => write(root, 'a.txt', 'agent\n'));
    write(root, 'notes.md', '# notes\n\nwritten by the user\n'); // between E1 and E2, outside any execution
    write(root, 'user.txt', 'mine\n');
    const e2 = await runExecution(sessionID, root, cap, () => write(root, 'a.txt', 'agent again\n'));
    const e3 = await runExecution(sessionID, root, cap, () => {});

    expect(await drift(e1.id)).toBeNull();
    const d2 = await drift(e2.id);
    expect(d2.execution.id).toBe(e2.id);
    expect(d2.boundary).toEqual({ __typename: 'SnapshotBoundary', start: { id: e1.end.id }, end: { id: e2.start.id } });
    expect(d2.coverage).toEqual({ __typename: 'CoverageComplete', fileCount: 2, incompleteExecutions: [] });
    expect(d2.files.map((f: any) => [f.path, f.status])).toEqual([['notes.md', 'MODIFIED'], ['user.txt', 'ADDED']]);
    expect(d2.files[0].patch).toContain('+written by the user');
    // E2's own changeset shows only the agent's edit; the range E1..E2 shows both.
    expect((await read(e2.id)).changeset.files.map((f: any) => f.path)).toEqual(['a.txt']);
    expect((await changes(sessionID, e1.id, e2.id)).files.map((f: any) => f.path)).toEqual(['a.txt', 'notes.md', 'user.txt']);
    // Nothing changed between E2 and E3.
    expect(await drift(e3.id)).toMatchObject({ fileCount: 0, coverage: { __typename: 'CoverageComplete', fileCount: 0 }, files: [] });

    // A page of executions reads every drift in one batch.
    const page = await g.gql(`query($s: ID!) { session(id: $s) { executions { edges { node { sequence driftBefore { fileCount } } } } } }`, { s: sessionID });
    expect(page.data.session.executions.edges.map((e: any) => e.node)).toEqual([
      { sequence: 3, driftBefore: { fileCount: 0 } }, { sequence: 2, driftBefore: { fileCount: 2 } }, { sequence: 1, driftBefore: null }]);
    expect(text(root, 'user.txt')).toBe('mine\n');
  });
});

describe('retention and compaction', () => {
  it('a range across a compaction is the range of its executions (a compaction changes no boundary)', async () => {
    const r = await g.gql(`mutation { createSession(input: { title: "compacted", directory: "/work/requests" }) { ... on Session { id } } }`, undefined, kit.pluginToken);
    const sessionID = r.data.createSession.id;
    const root = worktree({ 'a.txt': 'a\n' });
    const cap = new WorktreeCapturer();
    const e1 = await runExecution(sessionID, root, cap, () => write(root, 'a.txt', 'b\n'));
    await kit.appendPrompt(host, sessionID, 'please summarize');
    const compacted = await kit.compact(sessionID, 10_000);
    expect(compacted.__typename).toBe('SessionCompacted');
    const e2 = await runExecution(sessionID, root, cap, () => write(root, 'a.txt', 'c\n'));
    const range = await changes(sessionID, e1.id, e2.id);
    expect(range.coverage.__typename).toBe('CoverageComplete');
    expect(apply('a\n', range.files[0].patch)).toBe('c\n');
    expect((await drift(e2.id)).fileCount).toBe(0);
  });

  it('pruned snapshots: the range and the drift read EXPIRED, and their stored rows are gone', async () => {
    const sessionID = await newSession();
    const root = worktree({ 'a.txt': 'a\n' });
    const cap = new WorktreeCapturer();
    const e1 = await runExecution(sessionID, root, cap, () => write(root, 'a.txt', 'b\n'));
    write(root, 'drift.txt', 'outside\n');
    const e2 = await runExecution(sessionID, root, cap, () => write(root, 'a.txt', 'c\n'));
    const e3 = await runExecution(sessionID, root, cap, () => write(root, 'a.txt', 'd\n'));
    expect((await changes(sessionID, e1.id, e3.id)).coverage.__typename).toBe('CoverageComplete');
    expect((await drift(e2.id)).fileCount).toBe(1);
    const stored = async () => (await g.sql`SELECT count(*)::int AS n FROM snapshot_changesets WHERE session_id = ${sessionID}`)[0].n;
    expect(await stored()).toBe(2);

    await setPolicy(g.sql, { retainMs: 0, retainExecutions: 1, graceMs: 0 });
    try {
      let pruned = 0;
      for (let i = 0; i < 5 && pruned === 0; i++) pruned += (await pruneChangesets(g.sql)).changesets;
      expect(pruned).toBeGreaterThan(0);
    } finally {
      await setPolicy(g.sql, { retainMs: 2_592_000_000, retainExecutions: 10, graceMs: 3_600_000 });
    }
    const [{ n }] = await g.sql`SELECT count(*)::int AS n FROM changesets WHERE session_id = ${sessionID} AND pruned_at IS NOT NULL`;
    expect(n).toBe(2); // E1 and E2 (E3 is the last)
    expect(await stored()).toBe(0);
    const range = await changes(sessionID, e1.id, e3.id);
    expect(range).toMatchObject({ fileCount: 0, files: [], patch: null, coverage: { __typename: 'CoverageUnavailable', reason: 'EXPIRED' } });
    expect(range.coverage.incompleteExecutions.map((e: any) => e.id)).toEqual([e1.id, e2.id]);
    expect(await drift(e2.id)).toMatchObject({ coverage: { __typename: 'CoverageUnavailable', reason: 'EXPIRED' }, boundary: { __typename: 'BoundaryUnavailable', reason: 'EXPIRED' } });
    expect(range.boundary).toEqual({ __typename: 'BoundaryUnavailable', reason: 'EXPIRED' });
    // Nothing of the pruned pair was stored again; E3 alone still reads whole.
    expect(await stored()).toBe(0);
    expect((await changes(sessionID, e3.id, e3.id)).coverage.__typename).toBe('CoverageComplete');
  });
});
