import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { gql, startTestGateway, type TestGateway } from './harness.js';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { connect } from '../db/connection.js';
import { buildApp } from '../server/app.js';
import { encodeCursor } from '../resolvers/cursors.js';
import { registerHost } from './fixtures.js';
import { detectDistribution, isDistributed } from '../db/cluster.js';
import { SYSTEM } from '../domain/access.js';
import { createSession, updateSession } from '../domain/sessions.js';
import { beginExecution, settleExecution } from '../domain/executions.js';
import { appendMessage } from '../domain/messages.js';
import { finishJob, startJob } from '../domain/jobs.js';
import { correctMessagePart, retractMessage } from '../domain/corrections.js';
import { sealSession } from '../domain/seal.js';
import { ExecutionNotFoundError, JobNotFoundError, MessageNotFoundError } from '../domain/errors.js';
import { newId, sessionOf } from '../domain/ids.js';
import { changesetFiles, changesetFilesAt, changesetRows } from '../domain/changesets.js';
import { executionsById, executionsOfSession, jobsById, jobsOfExecution, messagesById, messagesOfExecution, messagesOfSession, sessionsById } from '../resolvers/loaders.js';
import type { Context } from '../resolvers/context.js';

/**
 * The read paths by key: a row found by its ID is found by (session, id), whatever the shape
 * of the ID, and the paged connections take one form per database (LATERAL … LIMIT on one Postgres, the
 * window form on Citus, resolvers/loaders.ts pageEach) with the same answers. Run on both: the embedded
 * Postgres by default, a Citus coordinator with CITUS_URL.
 */

let g: TestGateway;
let hostID: string;
/** Sessions made through the API (IDs of their rows carry them), with their children. */
const tree: { parents: string[]; children: Map<string, string[]> } = { parents: [], children: new Map() };
/** Rows inserted by SQL with IDs of the shape made before IDs carried their session. */
const old = {
  session: '',
  execution: 'exe_0000000000000000000000old1',
  message: 'msg_0000000000000000000000old1',
  part: 'prt_0000000000000000000000old1',
  job: 'job_0000000000000000000000old1',
  start: 'snp_0000000000000000000000old1',
  end: 'snp_0000000000000000000000old2',
};

beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  ({ hostID } = await registerHost(g));
  // Three parents, each with executions, messages, jobs and children of its own (a different number each,
  // so a page cut at the wrong parent shows).
  for (let i = 0; i < 3; i++) {
    const s = await createSession(g.sql, SYSTEM, { directory: '/read-keys', title: `p${i}` });
    tree.parents.push(s.id);
    const kids: string[] = [];
    for (let k = 0; k < i + 1; k++) kids.push((await createSession(g.sql, SYSTEM, { directory: '/read-keys', title: `c${i}.${k}`, parentID: s.id })).id);
    tree.children.set(s.id, kids);
    for (let x = 0; x < i + 2; x++) {
      const e = await beginExecution(g.sql, SYSTEM, { sessionID: s.id, hostID, trigger: 'PROMPT' });
      for (let m = 0; m < 3; m++) {
        await appendMessage(g.sql, SYSTEM, { sessionID: s.id, executionID: e.id, role: 'USER', origin: 'PROMPT', parts: [{ type: 'TEXT', text: `m${x}.${m}` }] });
      }
      await startJob(g.sql, SYSTEM, { sessionID: s.id, executionID: e.id, hostID, kind: 'SHELL', command: `job ${x}` });
      await settleExecution(g.sql, SYSTEM, { executionID: e.id, status: 'SUCCEEDED' });
    }
  }
  // A session whose rows have IDs of the old shape, written by SQL as an older gateway left them.
  const s = await createSession(g.sql, SYSTEM, { directory: '/read-keys', title: 'old' });
  old.session = s.id;
  await g.sql`INSERT INTO snapshots (id, session_id, file_count, byte_size, manifest) VALUES
    (${old.start}, ${s.id}, 0, 0, '{"files": [], "unscanned": []}'), (${old.end}, ${s.id}, 1, 2, '{"files": [], "unscanned": []}')`;
  await g.sql`INSERT INTO executions (id, session_id, sequence, host_id, status, trigger, settled_at, start_snapshot_id, end_snapshot_id)
    VALUES (${old.execution}, ${s.id}, 1, ${hostID}, 'SUCCEEDED', 'PROMPT', now(), ${old.start}, ${old.end})`;
  await g.sql`INSERT INTO messages (id, session_id, execution_id, position, role, origin) VALUES (${old.message}, ${s.id}, ${old.execution}, 1, 'USER', 'PROMPT')`;
  await g.sql`INSERT INTO parts (id, message_id, session_id, index, type, text) VALUES (${old.part}, ${old.message}, ${s.id}, 0, 'TEXT', 'old text')`;
  await g.sql`INSERT INTO jobs (id, session_id, execution_id, host_id, kind, status, command) VALUES (${old.job}, ${s.id}, ${old.execution}, ${hostID}, 'SHELL', 'COMPLETED', 'old job')`;
  await g.sql`INSERT INTO changesets (execution_id, session_id, coverage, file_count, additions) VALUES (${old.execution}, ${s.id}, 'COMPLETE', 1, 1)`;
  await g.sql`INSERT INTO changeset_files (execution_id, session_id, ord, path, status, additions, patch)
    VALUES (${old.execution}, ${s.id}, 0, 'a.txt', 'ADDED', 1, 'diff --git a/a.txt b/a.txt')`;
});
afterAll(async () => { await g?.stop(); });

describe('reads by key', () => {
  it('takes the forms of its database (those of a cluster exactly when the tables are distributed)', () => {
    expect(isDistributed(g.sql)).toBe(inject('citus'));
  });

  it('IDs of the old shape (no session in them) still find their rows, and everything under them', async () => {
    for (const id of Object.values(old).filter((v) => v !== old.session)) expect(sessionOf(id)).toBeNull();
    const r = await g.gql(`query($e: ID!, $m: ID!, $j: ID!) {
      execution(id: $e) { id session { id }
        messages { edges { node { id parts { ... on TextPart { id text } } } } }
        jobs { edges { node { id command } } }
        changeset { fileCount files { path patch } file(path: "a.txt") { path status } }
        boundary { __typename ... on SnapshotBoundary { start { id fileCount } end { id fileCount } } } }
      message(id: $m) { id execution { id } parts { ... on TextPart { text } } }
      job(id: $j) { id execution { id } }
      n: node(id: $e) { id }
      continuity(executionID: $e) { __typename } }`, { e: old.execution, m: old.message, j: old.job });
    expect(r.errors).toBeUndefined();
    expect(r.data).toEqual({
      execution: {
        id: old.execution, session: { id: old.session },
        messages: { edges: [{ node: { id: old.message, parts: [{ id: old.part, text: 'old text' }] } }] },
        jobs: { edges: [{ node: { id: old.job, command: 'old job' } }] },
        changeset: { fileCount: 1, files: [{ path: 'a.txt', patch: 'diff --git a/a.txt b/a.txt' }], file: { path: 'a.txt', status: 'ADDED' } },
        boundary: { __typename: 'SnapshotBoundary', start: { id: old.start, fileCount: 0 }, end: { id: old.end, fileCount: 1 } },
      },
      message: { id: old.message, execution: { id: old.execution }, parts: [{ text: 'old text' }] },
      job: { id: old.job, execution: { id: old.execution } },
      n: { id: old.execution },
      continuity: { __typename: 'ContinuityContinuous' },
    });
  });

  it('an execution of the old shape pages its messages and jobs beside executions whose IDs carry their session', async () => {
    const [e] = await g.sql<{ id: string }[]>`SELECT id FROM executions WHERE session_id = ${tree.parents[2]} ORDER BY sequence LIMIT 1`;
    const q = `query($a: ID!, $b: ID!) {
      a: execution(id: $a) { messages(first: 2) { edges { node { id } } pageInfo { hasNextPage } } jobs(first: 1) { edges { node { id } } } }
      b: execution(id: $b) { messages(first: 2) { edges { node { id } } pageInfo { hasNextPage } } jobs(first: 1) { edges { node { id } } } } }`;
    const r = await g.gql(q, { a: old.execution, b: e.id });
    expect(r.errors).toBeUndefined();
    const msgs = await g.sql<{ id: string }[]>`SELECT id FROM messages WHERE session_id = ${tree.parents[2]} AND execution_id = ${e.id} ORDER BY position`;
    const [job] = await g.sql<{ id: string }[]>`SELECT id FROM jobs WHERE session_id = ${tree.parents[2]} AND execution_id = ${e.id} ORDER BY id LIMIT 1`;
    expect(r.data).toEqual({
      a: { messages: { edges: [{ node: { id: old.message } }], pageInfo: { hasNextPage: false } }, jobs: { edges: [{ node: { id: old.job } }] } },
      b: { messages: { edges: msgs.slice(0, 2).map((m) => ({ node: { id: m.id } })), pageInfo: { hasNextPage: true } }, jobs: { edges: [{ node: { id: job.id } }] } },
    });
  });

  it.skipIf(!inject('citus'))('on Citus, a read by ID runs on the shard of its session alone', async () => {
    const sessionID = tree.parents[1];
    const [e] = await g.sql<{ id: string }[]>`SELECT id FROM executions WHERE session_id = ${sessionID} ORDER BY sequence DESC LIMIT 1`;
    const [m] = await g.sql<{ id: string }[]>`SELECT id FROM messages WHERE session_id = ${sessionID} LIMIT 1`;
    const [j] = await g.sql<{ id: string }[]>`SELECT id FROM jobs WHERE session_id = ${sessionID} LIMIT 1`;
    const execs = (await g.sql<{ id: string }[]>`SELECT id FROM executions WHERE session_id = ${sessionID}`).map((r) => r.id);
    expect(execs.length).toBeGreaterThan(1);
    // The statements the loaders send (text and parameters, as postgres.js sends them), then explained.
    const sent: { query: string; params: unknown[] }[] = [];
    const spy = postgres(g.dbUrl, { max: 1, onnotice: () => {}, transform: { column: { from: postgres.toCamel } }, debug: (_c, query, params) => { sent.push({ query, params }); } });
    // A context of its own per read: the paged loaders cache per context object.
    const ctx = () => ({ sql: spy, actor: SYSTEM }) as unknown as Context;
    const pages = (load: (c: Context, parent: string) => unknown, parents: string[]) => () => {
      const c = ctx();
      return Promise.all(parents.map((p) => load(c, p))); // one batch: one statement
    };
    const reads: Record<string, () => Promise<unknown>> = {
      session: () => sessionsById([sessionID], ctx()), execution: () => executionsById([e.id], ctx()),
      message: () => messagesById([m.id], ctx()), job: () => jobsById([j.id], ctx()),
      changeset: () => changesetRows(spy, [e.id]), files: () => changesetFiles(spy, [e.id]),
      file: () => changesetFilesAt(spy, [{ executionId: e.id, path: 'a.txt' }]),
      // Pages of several parents of one session: the LATERAL forms, on its shard alone.
      messagesOfExecutions: pages((c, p) => messagesOfExecution(c, p, { first: 2 }), execs),
      jobsOfExecutions: pages((c, p) => jobsOfExecution(c, p, { first: 2 }), execs),
    };
    const tasks: Record<string, number[]> = {};
    try {
      for (const [name, read] of Object.entries(reads)) {
        await read(); // once to warm up (postgres.js reads array type OIDs once per connection)
        sent.length = 0;
        await read();
        expect(sent).toHaveLength(1);
        const plan = await spy.unsafe(`EXPLAIN ${sent[0].query}`, sent[0].params as never[]);
        tasks[name] = plan.flatMap((r) => /Task Count: (\d+)/.exec(String(Object.values(r)[0]))?.[1] ?? []).map(Number);
      }
    } finally {
      await spy.end();
    }
    expect(tasks).toEqual(Object.fromEntries(Object.keys(reads).map((k) => [k, [1]])));

    // Pages of several sessions: on the shards of those sessions, no other.
    const shards = async (ids: string[]) => Number((await g.sql`
      SELECT count(DISTINCT get_shard_id_for_distribution_column('sessions', x)) AS n FROM unnest(${ids}::text[]) x`)[0].n);
    const several = tree.parents.slice(0, 2);
    const spy2 = postgres(g.dbUrl, { max: 1, onnotice: () => {}, transform: { column: { from: postgres.toCamel } }, debug: (_c, query, params) => { sent.push({ query, params }); } });
    try {
      expect(await detectDistribution(spy2)).toBe(true);
      for (const load of [executionsOfSession, messagesOfSession]) {
        const read = () => { const c = { sql: spy2, actor: SYSTEM } as unknown as Context; return Promise.all(several.map((p) => load(c, p, { first: 2 }))); };
        await read();
        sent.length = 0;
        await read();
        expect(sent).toHaveLength(1);
        const plan = await spy2.unsafe(`EXPLAIN ${sent[0].query}`, sent[0].params as never[]);
        expect(plan.flatMap((r) => /Task Count: (\d+)/.exec(String(Object.values(r)[0]))?.[1] ?? []).map(Number)).toEqual([await shards(several)]);
      }
    } finally {
      await spy2.end();
    }
  });

  it.skipIf(!inject('citus'))('on Citus, every read by ID through the API runs on its session\'s shard alone (a connection that refuses multi-shard statements answers it)', async () => {
    const sessionID = tree.parents[2];
    const execs = (await g.sql<{ id: string }[]>`SELECT id FROM executions WHERE session_id = ${sessionID} ORDER BY sequence`).map((r) => r.id);
    const e = execs.at(-1)!;
    const [m] = await g.sql<{ id: string }[]>`SELECT id FROM messages WHERE session_id = ${sessionID} AND execution_id = ${e} LIMIT 1`;
    const [j] = await g.sql<{ id: string }[]>`SELECT id FROM jobs WHERE session_id = ${sessionID} AND execution_id = ${e} LIMIT 1`;
    // A frozen changeset with files and patches for the newest execution, as the settling transaction leaves one.
    await g.sql`DELETE FROM changesets WHERE session_id = ${sessionID} AND execution_id = ${e}`;
    await g.sql`INSERT INTO changesets (execution_id, session_id, coverage, file_count, additions) VALUES (${e}, ${sessionID}, 'COMPLETE', 2, 2)`;
    await g.sql`INSERT INTO changeset_files (execution_id, session_id, ord, path, status, additions, patch) VALUES
      (${e}, ${sessionID}, 0, 'a.txt', 'ADDED', 1, 'diff --git a/a.txt b/a.txt'), (${e}, ${sessionID}, 1, 'b.txt', 'ADDED', 1, 'diff --git a/b.txt b/b.txt')`;

    // Every execution between the same two snapshots, and the changesets between them stored (as a first read of
    // Session.changes and Execution.driftBefore leaves them: computing one reads contents, sharded by hash).
    const [sa, sb] = [newId('snapshot', sessionID), newId('snapshot', sessionID)];
    await g.sql`INSERT INTO snapshots (id, session_id, host_id, file_count, byte_size, manifest) VALUES
      (${sa}, ${sessionID}, ${hostID}, 0, 0, ${g.sql.json({ files: [], unscanned: [] })}), (${sb}, ${sessionID}, ${hostID}, 0, 0, ${g.sql.json({ files: [], unscanned: [] })})`;
    await g.sql`UPDATE executions SET start_snapshot_id = ${sa}, end_snapshot_id = ${sb} WHERE session_id = ${sessionID}`;
    await g.sql`INSERT INTO snapshot_changesets (session_id, start_snapshot_id, end_snapshot_id, coverage, file_count, additions) VALUES
      (${sessionID}, ${sa}, ${sb}, 'COMPLETE', 1, 1), (${sessionID}, ${sb}, ${sa}, 'COMPLETE', 0, 0)`;
    await g.sql`INSERT INTO snapshot_changeset_files (session_id, start_snapshot_id, end_snapshot_id, ord, path, status, additions, patch) VALUES
      (${sessionID}, ${sa}, ${sb}, 0, 'a.txt', 'ADDED', 1, 'diff --git a/a.txt b/a.txt')`;

    // An instance of its own whose connections refuse any statement Citus would run on more than one shard,
    // with nothing in the background (no sweeps, no sequencer or feed passes): what it runs is the requests'.
    const refusing = connect(g.dbUrl, { max: 2, settings: { 'citus.multi_task_query_log_level': 'error' } });
    const app = buildApp({ sql: refusing, gateway: { sweepIntervalMs: 0, sequencerSafetyMs: 0, retentionIntervalMs: 0, feedPollMs: 0 } });
    await app.start();
    const ws = createClient({ url: app.wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${g.admin}` }, retryAttempts: 0, lazy: true });
    try {
      // The refusal is in force: a statement over every shard fails on this connection.
      await expect(refusing`SELECT count(*) FROM executions`).rejects.toThrow(/multi-task|multi-shard|multiple shards|task/i);

      const reads: Record<string, { query: string; check: (data: any) => void }> = {
        'execution with changeset and files': {
          query: `{ execution(id: "${e}") { id status sequence session { id title }
            changeset { fileCount additions coverage { __typename } files { path status patch } file(path: "b.txt") { path patch } }
            boundary { __typename } } }`,
          check: (d) => expect(d.execution.changeset.files.map((f: any) => f.path)).toEqual(['a.txt', 'b.txt']),
        },
        'execution with its messages (and parts) and jobs': {
          query: `{ execution(id: "${e}") { messages(first: 10) { edges { node { id role parts { __typename ... on TextPart { text } } } } }
            jobs(first: 10) { edges { node { id command status } } } } }`,
          check: (d) => { expect(d.execution.messages.edges).toHaveLength(3); expect(d.execution.jobs.edges).toHaveLength(1); },
        },
        'message with parts': {
          query: `{ message(id: "${m.id}") { id execution { id } session { id } parts { __typename ... on TextPart { text } } } }`,
          check: (d) => expect(d.message.parts).toHaveLength(1),
        },
        job: { query: `{ job(id: "${j.id}") { id command status execution { id } session { id } } }`, check: (d) => expect(d.job.id).toBe(j.id) },
        'session with its pages': {
          query: `{ session(id: "${sessionID}") { id title status eventsCursor parent { id } runningExecution { id } lastSettledExecution { id }
            executions(first: 2) { edges { node { id changeset { fileCount } messages(first: 1) { edges { node { id } } } jobs(first: 1) { edges { node { id } } } } } }
            messages(first: 3) { edges { node { id } } pageInfo { hasNextPage } }
            jobs(first: 3) { edges { node { id } } } context { role } } }`,
          check: (d) => { expect(d.session.executions.edges).toHaveLength(2); expect(d.session.lastSettledExecution.id).toBe(e); },
        },
        'a session\'s changes over its executions, and the drift before one': {
          query: `{ session(id: "${sessionID}") { changes(from: "${execs[0]}", to: "${e}") { ... on Changeset {
              fileCount coverage { __typename ... on CoverageComplete { incompleteExecutions { id } } } files { path patch } file(path: "a.txt") { path } } } }
            execution(id: "${e}") { driftBefore { fileCount files { path } coverage { __typename } } } }`,
          check: (d) => {
            expect(d.session.changes.files.map((f: any) => f.path)).toEqual(['a.txt']);
            expect(d.execution.driftBefore).toEqual({ fileCount: 0, files: [], coverage: { __typename: 'CoverageComplete' } });
          },
        },
        node: {
          query: `{ s: node(id: "${sessionID}") { id } e: node(id: "${e}") { id } m: node(id: "${m.id}") { id } j: node(id: "${j.id}") { id } }`,
          check: (d) => expect([d.s.id, d.e.id, d.m.id, d.j.id]).toEqual([sessionID, e, m.id, j.id]),
        },
        continuity: { query: `{ continuity(executionID: "${execs[0]}") { __typename } }`, check: (d) => expect(d.continuity.__typename).toMatch(/^Continuity/) },
        'settlements of a session': {
          query: `{ settlements(sessionID: "${sessionID}", first: 10) { edges { node { execution { id } } } } latestSettlementCursor(sessionID: "${sessionID}") }`,
          check: (d) => expect(d.settlements.edges.map((x: any) => x.node.execution.id)).toEqual(execs),
        },
      };
      for (const [name, { query, check }] of Object.entries(reads)) {
        const r = await gql(app.url, g.admin, query);
        expect({ name, errors: r.errors }).toEqual({ name, errors: undefined });
        check(r.data);
      }

      // A session's events, replayed from its first over WebSocket, on the same connections. (A subscription
      // to executionSettled joins the instance's one reader of the whole settlement log, which reads the
      // log's head once when it starts; its replay of one session's settlements is `readSettlements`, the
      // statement of the `settlements(sessionID)` query above.)
      const journal = await g.sql<{ seq: number }[]>`SELECT seq FROM journal WHERE session_id = ${sessionID} ORDER BY seq`;
      const events = await new Promise<any[]>((resolve, reject) => {
        const got: any[] = [];
        const stop = ws.subscribe({ query: `subscription { sessionEvents(sessionID: "${sessionID}", after: "${encodeCursor('journal', 0)}") { sequence } }` }, {
          next: (v) => { if (v.errors) reject(new Error(JSON.stringify(v.errors))); got.push(v.data); if (got.length === journal.length) { stop(); resolve(got); } },
          error: reject, complete: () => resolve(got),
        });
      });
      expect(events.map((x) => x.sessionEvents.sequence)).toEqual(journal.map((r) => r.seq));
    } finally {
      await ws.dispose();
      await app.stop();
      await refusing.end({ timeout: 1 });
    }
  });

  it('pages of several parents in one request answer what each parent alone answers, page after page', async () => {
    const page = `executions(first: 2, after: $after) { edges { cursor node { id sequence
        messages(first: 2) { edges { node { id } } pageInfo { hasNextPage } }
        jobs(first: 1) { edges { node { id } } pageInfo { hasNextPage } } } }
        pageInfo { hasNextPage endCursor } }
      messages(first: 4) { edges { node { id } } pageInfo { hasNextPage } }
      jobs(first: 2) { edges { node { id } } pageInfo { hasNextPage } }
      children(first: 1) { edges { node { id } } pageInfo { hasNextPage endCursor } }`;
    const all = await g.gql(`query($after: String) { ${tree.parents.map((_, i) => `s${i}: session(id: "${tree.parents[i]}") { ${page} }`).join(' ')} }`,
      { after: null });
    expect(all.errors).toBeUndefined();
    for (let i = 0; i < tree.parents.length; i++) {
      const one = await g.gql(`query($after: String) { s: session(id: "${tree.parents[i]}") { ${page} } }`, { after: null });
      expect(one.errors).toBeUndefined();
      expect(all.data[`s${i}`]).toEqual(one.data.s);
      // Against the tables: newest executions first, two of them; the parent's own children, in ID order.
      const execs = await g.sql<{ id: string }[]>`SELECT id FROM executions WHERE session_id = ${tree.parents[i]} ORDER BY sequence DESC`;
      expect(one.data.s.executions.edges.map((e: any) => e.node.id)).toEqual(execs.slice(0, 2).map((e) => e.id));
      expect(one.data.s.executions.pageInfo.hasNextPage).toBe(execs.length > 2);
      expect(one.data.s.children.edges.map((e: any) => e.node.id)).toEqual(tree.children.get(tree.parents[i])!.slice(0, 1));
      expect(one.data.s.children.pageInfo.hasNextPage).toBe(tree.children.get(tree.parents[i])!.length > 1);
      expect(one.data.s.messages.edges).toHaveLength(4);
      for (const e of one.data.s.executions.edges) {
        expect(e.node.messages.edges).toHaveLength(2);
        expect(e.node.messages.pageInfo.hasNextPage).toBe(true);
        expect(e.node.jobs.edges).toHaveLength(1);
        expect(e.node.jobs.pageInfo.hasNextPage).toBe(false);
      }
    }
    // The next page of every parent at once (same `after` for all: the cursors of one list are its keys).
    const after = all.data.s2.executions.pageInfo.endCursor;
    const next = await g.gql(`query($after: String) { ${tree.parents.map((_, i) => `s${i}: session(id: "${tree.parents[i]}") { executions(first: 2, after: $after) { edges { node { sequence } } } }`).join(' ')} }`, { after });
    expect(next.errors).toBeUndefined();
    const seq = all.data.s2.executions.edges.at(-1).node.sequence;
    for (let i = 0; i < tree.parents.length; i++) {
      const rows = await g.sql<{ sequence: number }[]>`SELECT sequence FROM executions WHERE session_id = ${tree.parents[i]} AND sequence < ${seq} ORDER BY sequence DESC LIMIT 2`;
      expect(next.data[`s${i}`].executions.edges.map((e: any) => e.node.sequence)).toEqual(rows.map((r) => r.sequence));
    }
  });
});

describe('writes by key', () => {
  it.skipIf(!inject('citus'))('on Citus, every write of a session runs on its shard alone (a pool that refuses multi-shard statements makes them all)', async () => {
    const refusing = connect(g.dbUrl, { max: 2, settings: { 'citus.multi_task_query_log_level': 'error' } });
    try {
      await expect(refusing`SELECT count(*) FROM journal`).rejects.toThrow(/multi-task|multi-shard|task/i);
      const parent = await createSession(refusing, SYSTEM, { directory: '/read-keys/w', title: 'parent' });
      const s = await createSession(refusing, SYSTEM, { directory: '/read-keys/w', title: 'child', parentID: parent.id });
      await updateSession(refusing, SYSTEM, { sessionID: s.id, title: 'renamed', metadata: { k: 1 } });
      const e = await beginExecution(refusing, SYSTEM, { sessionID: s.id, hostID, trigger: 'PROMPT' });
      const m = await appendMessage(refusing, SYSTEM, { sessionID: s.id, executionID: e.id, role: 'ASSISTANT', origin: 'MODEL', parts: [{ type: 'TEXT', text: 'a secret' }] });
      const [part] = await g.sql<{ id: string }[]>`SELECT id FROM parts WHERE session_id = ${s.id} AND message_id = ${m.id}`;
      const m2 = await appendMessage(refusing, SYSTEM, { sessionID: s.id, executionID: e.id, role: 'USER', origin: 'PROMPT', parts: [{ type: 'TEXT', text: 'oops' }] });
      const job = await startJob(refusing, SYSTEM, { sessionID: s.id, executionID: e.id, hostID, kind: 'SHELL', command: 'make' });
      await finishJob(refusing, SYSTEM, { jobID: job.id, status: 'COMPLETED', exitCode: 0 });
      await settleExecution(refusing, SYSTEM, { executionID: e.id, status: 'SUCCEEDED' });
      await correctMessagePart(refusing, SYSTEM, { messageID: m.id, partID: part.id, text: 'redacted' });
      await retractMessage(refusing, SYSTEM, { messageID: m2.id, reason: 'typo' });
      // A running job: the seal closes admissions, asks the host to cancel it and, not waiting, answers that it runs.
      await startJob(refusing, SYSTEM, { sessionID: s.id, hostID, kind: 'SHELL', command: 'sleep' });
      await expect(sealSession(refusing, SYSTEM, { sessionID: s.id, timeoutMs: 0 }, { bus: g.app.gateway.bus })).rejects.toThrow();
      const events = await g.sql<{ type: string }[]>`SELECT type FROM journal WHERE session_id = ${s.id} ORDER BY seq`;
      expect(events.map((x) => x.type)).toEqual(['session.created', 'session.updated', 'execution.started', 'message.appended', 'message.appended',
        'job.started', 'job.finished', 'execution.settled', 'message.part_corrected', 'message.retracted', 'job.started', 'session.sealing', 'job.cancelling']);
    } finally {
      await refusing.end({ timeout: 1 });
    }
  });

  it('settle, finish and correct find rows of the old shape (looked up before the lock), and answer not found for made-up ones', async () => {
    // Running rows of the old shape, as an older gateway left them mid-execution.
    const s = await createSession(g.sql, SYSTEM, { directory: '/read-keys', title: 'old, running' });
    const ids = { execution: 'exe_0000000000000000000000old3', job: 'job_0000000000000000000000old3', message: 'msg_0000000000000000000000old3', part: 'prt_0000000000000000000000old3' };
    await g.sql`INSERT INTO executions (id, session_id, sequence, host_id, status, trigger) VALUES (${ids.execution}, ${s.id}, 1, ${hostID}, 'RUNNING', 'PROMPT')`;
    await g.sql`UPDATE sessions SET execution_count = 1 WHERE id = ${s.id}`;
    await g.sql`INSERT INTO jobs (id, session_id, execution_id, host_id, kind, status, command) VALUES (${ids.job}, ${s.id}, ${ids.execution}, ${hostID}, 'SHELL', 'RUNNING', 'old job')`;
    await g.sql`INSERT INTO messages (id, session_id, execution_id, position, role, origin) VALUES (${ids.message}, ${s.id}, ${ids.execution}, 1, 'USER', 'PROMPT')`;
    await g.sql`INSERT INTO parts (id, message_id, session_id, index, type, text) VALUES (${ids.part}, ${ids.message}, ${s.id}, 0, 'TEXT', 'old text')`;
    const missing = { execution: 'exe_0000000000000000000000nope', job: 'job_0000000000000000000000nope', message: 'msg_0000000000000000000000nope' };

    await expect(finishJob(g.sql, SYSTEM, { jobID: missing.job, status: 'COMPLETED' })).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await finishJob(g.sql, SYSTEM, { jobID: ids.job, status: 'COMPLETED', exitCode: 0 })).toMatchObject({ id: ids.job, sessionId: s.id, status: 'COMPLETED' });
    await expect(settleExecution(g.sql, SYSTEM, { executionID: missing.execution, status: 'SUCCEEDED' })).rejects.toBeInstanceOf(ExecutionNotFoundError);
    expect(await settleExecution(g.sql, SYSTEM, { executionID: ids.execution, status: 'SUCCEEDED' })).toMatchObject({ id: ids.execution, sessionId: s.id, status: 'SUCCEEDED' });
    await expect(correctMessagePart(g.sql, SYSTEM, { messageID: missing.message, partID: ids.part, text: 'x' })).rejects.toBeInstanceOf(MessageNotFoundError);
    const corrected = await correctMessagePart(g.sql, SYSTEM, { messageID: ids.message, partID: ids.part, text: 'new text' });
    expect(corrected.part).toMatchObject({ id: ids.part, text: 'new text' });
    // Each write went through the journal of the old session, in order.
    const events = await g.sql<{ type: string }[]>`SELECT type FROM journal WHERE session_id = ${s.id} ORDER BY seq`;
    expect(events.map((e) => e.type)).toEqual(['session.created', 'job.finished', 'execution.settled', 'message.part_corrected']);
  });
});
