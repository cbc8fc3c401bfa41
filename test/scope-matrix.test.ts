import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GraphQLField } from 'graphql';
import { schema } from '../schema/index.js';
import type { Role } from '../domain/access.js';
import { startTestGateway, subscribe, type TestGateway } from './harness.js';
import { appendText, begin, createSession, ok, registerHost, settle, startJob } from './fixtures.js';
import { rootFields } from './support/schema-args.js';
import { encodeCursor } from '../resolvers/cursors.js';

const FROM_START = encodeCursor('settlement', 0);
const JOURNAL_START = Buffer.from('journal:0').toString('base64url');

/**
 * The scope matrix. Every root field of Query, Mutation and Subscription
 * (taken from the schema, so a new field without a case fails the first test) is called with admin,
 * host, plugin and reader tokens scoped to A, on A's objects and on B's:
 * - a role the field does not allow (or, for an instance-wide field, any scoped token): FORBIDDEN;
 * - in scope: it works;
 * - out of scope: it reads exactly like a missing object (compared with the answer for an ID that does
 *   not exist), changes nothing, and the answer holds none of B's IDs or text.
 */

const A = '/mx/a';
const B = '/mx/b';
const ROLES: Role[] = ['admin', 'host', 'plugin', 'reader'];
const READERS: Role[] = ['reader', 'plugin', 'admin'];
const MISSING = { session: 'ses_0000000000000missing0000', execution: 'exe_0000000000000missing0000', message: 'msg_0000000000000missing0000', part: 'prt_0000000000000missing0000', job: 'job_0000000000000missing0000', command: 'cmd_0000000000000missing0000', host: 'hst_0000000000000missing0000', comment: 'cmt_0000000000000missing0000' };

let g: TestGateway;
const tok = {} as Record<Role, string>;
type Host = { hostID: string; token: string };
const hosts = {} as Partial<Record<Role, Host>>;
let hostU: Host; // B's host, registered by an unscoped host token
interface Dir { session: string; child: string; execution: string; message: string; part: string; job: string; settledSeq: number }
const w = {} as Record<'a' | 'b', Dir>;
/** Every ID and text of B's world: none may appear in an answer to an A-scoped token unless the request named it. */
const bSecrets = new Set<string>();

interface Ctx { role: Role; token: string; host: Host | undefined }
interface Answer { value: any; errors: any[] }

async function call(token: string, query: string, variables?: Record<string, unknown>): Promise<Answer> {
  const r = await g.gql(query, variables, token);
  return { value: r.data ? Object.values(r.data)[0] : undefined, errors: r.errors ?? [] };
}

/** What the answer may say of B: only what the request itself named. */
function noLeak(a: unknown, request: unknown = {}) {
  const text = JSON.stringify(a);
  const named = JSON.stringify(request);
  for (const s of bSecrets) if (!named.includes(s)) expect(text, `leaked ${s}`).not.toContain(s);
}

/** The answer for `id` equals the answer for an ID that does not exist (the IDs themselves aside). */
async function likeMissing(token: string, query: string, vars: Record<string, unknown>, key: string, missing: string, path?: (v: any) => any) {
  const real = await call(token, query, vars);
  const none = await call(token, query, { ...vars, [key]: missing });
  const norm = (x: Answer, id: string) => JSON.parse(JSON.stringify(path ? path(x.value) : x).split(id).join('<id>'));
  expect(norm(real, String(vars[key]))).toEqual(norm(none, missing));
  noLeak(real, vars);
  return real;
}

// ---- fixtures ----------------------------------------------------------------------------------------

const SEAL = `mutation($id: ID!) { sealSession(input: { sessionID: $id, timeoutMs: 0 }) { __typename } }`;

async function freshSession(dir: string, extra: Record<string, unknown> = {}) {
  const s = await createSession(g, { directory: dir, title: dir === B ? 'SECRET-B session' : 'a session', ...extra });
  if (dir === B) bSecrets.add(s.id);
  return s.id as string;
}
/** A running execution: in A on the caller's own host (or A's host token's), in B on B's host. */
async function freshRunning(dir: string, c?: Ctx) {
  const host = dir === B ? hostU : (c?.host ?? hosts.host!);
  const e = await begin(g, host, await freshSession(dir));
  if (dir === B) bSecrets.add(e.id);
  return e.id as string;
}
async function freshJob(dir: string, c?: Ctx) {
  const host = dir === B ? hostU : (c?.host ?? hosts.host!);
  const j = await startJob(g, host, await freshSession(dir));
  if (dir === B) bSecrets.add(j.id);
  return j.id as string;
}
async function freshMessage(dir: string) {
  const host = dir === B ? hostU : hosts.host!;
  const m = await appendText(g, host, await freshSession(dir), dir === B ? 'SECRET-B text' : 'a text');
  if (dir === B) { bSecrets.add(m.id); bSecrets.add(m.parts[0].id); }
  return { messageID: m.id as string, partID: m.parts[0].id as string };
}
/**
 * A pending INTERRUPT_EXECUTION command for `host`, of a session in `dir`: an execution runs on that
 * host (in B begun by the unscoped admin, who may act for any host: a host shared by two directories)
 * and the session's seal asks the host to interrupt it.
 */
async function freshCommand(dir: string, host: Host) {
  const s = await freshSession(dir);
  const e = await begin(g, dir === B ? { hostID: host.hostID, token: g.admin } : host, s);
  expect(e.__typename).toBe('Execution');
  expect((await ok(g, SEAL, { id: s })).__typename).toBe('SealTimeoutError');
  const [c] = await g.sql`SELECT id FROM host_commands WHERE session_id = ${s} AND kind = 'INTERRUPT_EXECUTION'`;
  if (dir === B) { bSecrets.add(e.id); bSecrets.add(c.id); }
  return c.id as string;
}

/** A review comment on the whole changeset of the directory's settled execution (added by the unscoped admin). */
async function freshComment(dir: string) {
  const d = dir === B ? w.b : w.a;
  const c = await ok(g, `mutation($i: AddReviewCommentInput!) { addReviewComment(input: $i) { __typename ... on ReviewComment { id } } }`, {
    i: { sessionID: d.session, changeset: { kind: 'EXECUTION', executionID: d.execution }, body: dir === B ? 'SECRET-B comment' : 'a comment' },
  });
  expect(c.__typename).toBe('ReviewComment');
  if (dir === B) bSecrets.add(c.id);
  return c.id as string;
}
const COMMENT_STATE = (id: string) => g.sql`SELECT state FROM review_comments WHERE id = ${id}`.then((r) => r[0]?.state);

beforeAll(async () => {
  g = await startTestGateway();
  for (const r of ROLES) tok[r] = await g.token(r, A);
  for (const r of ['admin', 'host'] as const) hosts[r] = await registerHost(g, { token: tok[r], leaseMs: 600_000 });
  hostU = await registerHost(g, { token: await g.token('host'), leaseMs: 600_000 });
  bSecrets.add(hostU.hostID);
  // B first: its settlement precedes A's in the log, so a reader of the log that sees A's has passed B's.
  for (const [k, dir, host] of [['b', B, hostU], ['a', A, hosts.host!]] as const) {
    const session = await freshSession(dir);
    const child = await freshSession(dir, { parentID: session });
    const m = await appendText(g, host, session, dir === B ? 'SECRET-B text' : 'a text');
    const e = await begin(g, host, session);
    await settle(g, host, e.id);
    const j = await startJob(g, host, session);
    w[k] = { session, child, execution: e.id, message: m.id, part: m.parts[0].id, job: j.id, settledSeq: 0 };
    if (k === 'b') for (const id of [e.id, m.id, m.parts[0].id, j.id]) bSecrets.add(id);
  }
  bSecrets.add('SECRET-B');
});
afterAll(async () => { await g?.stop(); });

// ---- the cases: one per root field -------------------------------------------------------------------

interface Case {
  /** A request to show the role check (any valid call). */
  probe(): { query: string; variables?: Record<string, unknown> };
  in(c: Ctx): Promise<void>;
  out(c: Ctx): Promise<void>;
}

const q = (query: string, variables?: Record<string, unknown>) => () => ({ query, variables });

/** A read by ID: in scope it answers the object, out of scope like a missing ID. */
/** `selection` besides the id: what must read as missing too (an execution's changeset comes in the same statement). */
function readCase(field: string, kind: keyof typeof MISSING, pick: (d: Dir) => string, selection = ''): Case {
  const query = `query($id: ID!) { ${field}(id: $id) { id ${selection} } }`;
  return {
    probe: q(query, { id: MISSING[kind] }),
    async in(c) {
      const id = pick(w.a);
      expect((await call(c.token, query, { id })).value).toMatchObject({ id });
    },
    async out(c) {
      const r = await likeMissing(c.token, query, { id: pick(w.b) }, 'id', MISSING[kind]);
      expect(r.value).toBeNull();
    },
  };
}

const CASES: Record<string, Case> = {
  // ---- Query
  changesetPolicy: {
    probe: q(`{ changesetPolicy { retainMs } }`),
    async in(c) {
      const mine = await call(c.token, `{ changesetPolicy { retainMs maxContentBytes filePatchBytes } }`);
      expect(mine.errors).toEqual([]);
      expect(typeof mine.value.retainMs).toBe('number');
    },
    async out(c) {
      // One instance-wide policy: a scoped token reads exactly what an unscoped admin reads, nothing per directory.
      const query = `{ changesetPolicy { filePatchBytes changesetPatchBytes maxContentBytes maxUploadBytes maxManifestFiles retainMs retainExecutions graceMs } }`;
      expect((await call(c.token, query)).value).toEqual((await call(g.admin, query)).value);
    },
  },
  continuity: {
    probe: q(`query($id: ID!) { continuity(executionID: $id) { __typename } }`, { id: MISSING.execution }),
    async in(c) {
      const r = await call(c.token, `query($id: ID!) { continuity(executionID: $id) { __typename } }`, { id: w.a.execution });
      expect(r.value.__typename).not.toBe('ContinuityUnknown');
    },
    async out(c) {
      const r = await likeMissing(c.token, `query($id: ID!) { continuity(executionID: $id) { __typename ... on ContinuityUnknown { reason } } }`, { id: w.b.execution }, 'id', MISSING.execution);
      expect(r.value).toEqual({ __typename: 'ContinuityUnknown', reason: 'UNKNOWN_EXECUTION' });
    },
  },
  execution: readCase('execution', 'execution', (d) => d.execution, 'boundary { __typename } changeset { fileCount files { path } }'),
  hostCommand: {
    probe: q(`query($id: ID!) { hostCommand(id: $id) { id } }`, { id: MISSING.command }),
    async in(c) {
      const id = await freshCommand(A, c.host!);
      expect((await call(c.token, `query($id: ID!) { hostCommand(id: $id) { id kind sessionID } }`, { id })).value).toMatchObject({ id, kind: 'INTERRUPT_EXECUTION' });
    },
    async out(c) {
      // A command for the caller's own host, of a session in B.
      const id = await freshCommand(B, c.host!);
      const r = await likeMissing(c.token, `query($id: ID!) { hostCommand(id: $id) { id kind sessionID payload } }`, { id }, 'id', MISSING.command);
      expect(r.value).toBeNull();
    },
  },
  job: readCase('job', 'job', (d) => d.job),
  reviewComment: {
    probe: q(`query($id: ID!) { reviewComment(id: $id) { id } }`, { id: MISSING.comment }),
    async in(c) {
      const id = await freshComment(A);
      expect((await call(c.token, `query($id: ID!) { reviewComment(id: $id) { id body session { id } } }`, { id })).value).toEqual({ id, body: 'a comment', session: { id: w.a.session } });
    },
    async out(c) {
      const id = await freshComment(B);
      const r = await likeMissing(c.token, `query($id: ID!) { reviewComment(id: $id) { id body } }`, { id }, 'id', MISSING.comment);
      expect(r.value).toBeNull();
    },
  },
  message: readCase('message', 'message', (d) => d.message),
  missingContents: {
    probe: q(`{ missingContents(hashes: ["${'0'.repeat(64)}"]) { __typename } }`),
    async in(c) {
      const r = await call(c.token, `query($h: [String!]!) { missingContents(hashes: $h) { ... on MissingContents { hashes } } }`, { h: ['0'.repeat(64)] });
      expect(r.value).toEqual({ hashes: ['0'.repeat(64)] });
    },
    async out(c) {
      // Content-addressed store shared by every directory: the answer is about hashes, never about sessions.
      const r = await call(c.token, `query($h: [String!]!) { missingContents(hashes: $h) { ... on MissingContents { hashes } } }`, { h: ['1'.repeat(64)] });
      expect(r.value).toEqual({ hashes: ['1'.repeat(64)] });
      noLeak(r);
    },
  },
  node: readCase('node', 'session', (d) => d.session),
  session: readCase('session', 'session', (d) => d.session),
  sessions: {
    probe: q(`{ sessions(first: 1) { edges { cursor } } }`),
    async in(c) {
      const r = await call(c.token, `{ sessions(first: 100) { edges { node { id directory } } } }`);
      const ids = r.value.edges.map((e: any) => e.node.id);
      expect(ids).toContain(w.a.session);
      expect(r.value.edges.every((e: any) => e.node.directory.startsWith(A))).toBe(true);
      noLeak(r);
    },
    async out(c) {
      const query = `query($id: ID) { sessions(first: 100, parentID: $id) { edges { node { id } } } }`;
      const r = await likeMissing(c.token, query, { id: w.b.session }, 'id', MISSING.session);
      expect(r.value.edges).toEqual([]);
    },
  },
  settlements: {
    probe: q(`{ settlements(first: 1) { edges { cursor } } }`),
    async in(c) {
      const r = await call(c.token, `{ settlements(first: 100) { edges { node { executionID sessionID } } } }`);
      expect(r.value.edges.map((e: any) => e.node.executionID)).toContain(w.a.execution);
      noLeak(r);
    },
    async out(c) {
      const query = `query($id: ID) { settlements(first: 100, sessionID: $id) { edges { node { executionID } } } }`;
      const r = await likeMissing(c.token, query, { id: w.b.session }, 'id', MISSING.session);
      expect(r.value.edges).toEqual([]);
    },
  },
  usage: {
    probe: q(`{ usage(input: { from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z", groupBy: [] }) { __typename } }`),
    async in(c) {
      const query = `query($id: ID) { usage(input: { from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z", groupBy: [SESSION], sessionID: $id }) {
        __typename ... on UsageReport { groups { key { sessionID } executions { total } } } } }`;
      const all = await call(c.token, query);
      expect(all.value.groups.map((gr: any) => gr.key.sessionID)).toContain(w.a.session);
      noLeak(all);
      const own = await call(c.token, query, { id: w.a.session });
      expect(own.value.groups.map((gr: any) => gr.key.sessionID)).toEqual([w.a.session]);
    },
    async out(c) {
      // Another directory's session reads as a missing one; a report of everything counts none of its executions.
      const query = `query($id: ID) { usage(input: { from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z", groupBy: [SESSION], sessionID: $id }) {
        __typename ... on SessionNotFoundError { message } ... on UsageReport { groups { key { sessionID } } } } }`;
      const r = await likeMissing(c.token, query, { id: w.b.session }, 'id', MISSING.session);
      expect(r.value.__typename).toBe('SessionNotFoundError');
      const all = await call(c.token, query);
      expect(all.value.groups.map((gr: any) => gr.key.sessionID)).not.toContain(w.b.session);
    },
  },
  latestSettlementCursor: {
    probe: q(`{ latestSettlementCursor }`),
    async in(c) {
      const r = await call(c.token, `query($id: ID) { latestSettlementCursor(sessionID: $id) }`, { id: w.a.session });
      expect(r.errors).toEqual([]);
      expect(r.value).not.toBe(FROM_START); // A's session has a settlement
    },
    async out(c) {
      const query = `query($id: ID) { latestSettlementCursor(sessionID: $id) }`;
      const r = await likeMissing(c.token, query, { id: w.b.session }, 'id', MISSING.session);
      expect(r.value).toBe(FROM_START);
    },
  },
  tokens: {
    probe: q(`{ tokens { edges { cursor } } }`),
    async in(c) {
      const below = await ok(g, `mutation { createToken(input: { role: reader, directory: "${A}/deep" }) { ... on CreatedToken { id } } }`);
      const r = await call(c.token, `{ tokens(first: 100) { edges { node { id directory role } } } }`);
      const dirs = r.value.edges.map((e: any) => e.node.directory);
      expect(r.value.edges.map((e: any) => e.node.id)).toContain(below.id);
      expect(dirs.length).toBeGreaterThanOrEqual(5);
      expect(dirs.every((d: string | null) => d === A || d?.startsWith(A + '/'))).toBe(true);
    },
    async out(c) {
      const other = await ok(g, `mutation { createToken(input: { role: reader, directory: "${B}" }) { ... on CreatedToken { id } } }`);
      const unscoped = await ok(g, `mutation { createToken(input: { role: admin }) { ... on CreatedToken { id } } }`);
      const sibling = await ok(g, `mutation { createToken(input: { role: admin, directory: "${A}b" }) { ... on CreatedToken { id } } }`);
      const r = await call(c.token, `{ tokens(first: 100, includeRevoked: true) { edges { node { id directory } } } }`);
      const ids = r.value.edges.map((e: any) => e.node.id);
      for (const t of [other, unscoped, sibling]) expect(ids).not.toContain(t.id);
    },
  },

  // ---- Mutation
  acknowledgeHostCommand: {
    probe: q(`mutation($id: ID!) { acknowledgeHostCommand(input: { commandID: $id }) { __typename } }`, { id: MISSING.command }),
    async in(c) {
      const id = await freshCommand(A, c.host!);
      const r = await call(c.token, `mutation($id: ID!) { acknowledgeHostCommand(input: { commandID: $id }) { __typename ... on HostCommand { id acknowledgedAt } } }`, { id });
      expect(r.value).toMatchObject({ __typename: 'HostCommand', id });
      expect(r.value.acknowledgedAt).not.toBeNull();
    },
    async out(c) {
      const id = await freshCommand(B, c.host!);
      const r = await likeMissing(c.token, `mutation($id: ID!) { acknowledgeHostCommand(input: { commandID: $id }) { __typename ... on Error { message code } ... on InvalidRequestError { field } } }`, { id }, 'id', MISSING.command);
      expect(r.value).toMatchObject({ __typename: 'InvalidRequestError', field: 'commandID' });
      const [row] = await g.sql`SELECT acknowledged_at FROM host_commands WHERE id = ${id}`;
      expect(row.acknowledgedAt).toBeNull();
    },
  },
  appendMessage: {
    probe: q(`mutation { appendMessage(input: { sessionID: "${MISSING.session}", role: USER, origin: PROMPT, parts: [] }) { __typename } }`),
    async in(c) {
      const r = await appendText(g, { token: c.token }, w.a.session, 'in scope');
      expect(r.__typename).toBe('Message');
    },
    async out(c) {
      const query = `mutation($id: ID!) { appendMessage(input: { sessionID: $id, role: USER, origin: PROMPT, parts: [{ type: TEXT, text: "x" }] }) { __typename ... on Error { message code } ... on SessionNotFoundError { sessionID } } }`;
      const before = await g.sql`SELECT count(*)::int AS n FROM messages WHERE session_id = ${w.b.session}`;
      const r = await likeMissing(c.token, query, { id: w.b.session }, 'id', MISSING.session);
      expect(r.value.__typename).toBe('SessionNotFoundError');
      expect(await g.sql`SELECT count(*)::int AS n FROM messages WHERE session_id = ${w.b.session}`).toEqual(before);
    },
  },
  backgroundJob: {
    probe: q(`mutation { backgroundJob(input: { jobID: "${MISSING.job}" }) { __typename } }`),
    async in(c) {
      const id = await freshJob(A, c);
      expect((await call(c.token, `mutation($id: ID!) { backgroundJob(input: { jobID: $id }) { __typename ... on Job { background } } }`, { id })).value).toEqual({ __typename: 'Job', background: true });
    },
    async out(c) {
      const id = await freshJob(B);
      const r = await likeMissing(c.token, `mutation($id: ID!) { backgroundJob(input: { jobID: $id }) { __typename ... on Error { message code } } }`, { id }, 'id', MISSING.job);
      expect(r.value.__typename).toBe('JobNotFoundError');
      expect((await g.sql`SELECT background FROM jobs WHERE id = ${id}`)[0].background).toBe(false);
    },
  },
  beginExecution: {
    probe: q(`mutation { beginExecution(input: { sessionID: "${MISSING.session}", hostID: "${MISSING.host}", trigger: PROMPT }) { __typename } }`),
    async in(c) {
      const e = await begin(g, c.host!, await freshSession(A));
      expect(e.__typename).toBe('Execution');
    },
    async out(c) {
      const id = await freshSession(B);
      const query = `mutation($id: ID!, $h: ID!) { beginExecution(input: { sessionID: $id, hostID: $h, trigger: PROMPT }) { __typename ... on Error { message code } } }`;
      const r = await likeMissing(c.token, query, { id, h: c.host!.hostID }, 'id', MISSING.session);
      expect(r.value.__typename).toBe('SessionNotFoundError');
      expect(await g.sql`SELECT id FROM executions WHERE session_id = ${id}`).toEqual([]);
    },
  },
  admitWork: {
    probe: q(`mutation { admitWork(input: { sessionID: "${MISSING.session}", hostID: "${MISSING.host}", route: "POST /x" }) { __typename } }`),
    async in(c) {
      // A front declares exclusive admission (the OpenCode admission proxy's bridge does).
      const h = await call(c.token, `mutation { registerHost(input: { name: "front", leaseMs: 600000, capabilities: { cancel: true, exclusiveAdmission: true } }) { __typename ... on Host { id } } }`);
      expect(h.value.__typename).toBe('Host');
      const r = await call(c.token, `mutation($id: ID!, $h: ID!) { admitWork(input: { sessionID: $id, hostID: $h, route: "POST /session/x/prompt_async" }) { __typename } }`,
        { id: await freshSession(A), h: h.value.id });
      expect(r.value.__typename).toBe('Admission');
    },
    async out(c) {
      const h = await call(c.token, `mutation { registerHost(input: { name: "front", leaseMs: 600000, capabilities: { cancel: true, exclusiveAdmission: true } }) { __typename ... on Host { id } } }`);
      const id = await freshSession(B);
      const query = `mutation($id: ID!, $h: ID!) { admitWork(input: { sessionID: $id, hostID: $h, route: "POST /x" }) { __typename ... on Error { message code } } }`;
      const r = await likeMissing(c.token, query, { id, h: h.value.id }, 'id', MISSING.session);
      expect(r.value.__typename).toBe('SessionNotFoundError');
      expect(await g.sql`SELECT id FROM admissions WHERE session_id = ${id}`).toEqual([]);
    },
  },
  addReviewComment: {
    probe: q(`mutation { addReviewComment(input: { sessionID: "${MISSING.session}", changeset: { kind: EXECUTION, executionID: "${MISSING.execution}" }, body: "x" }) { __typename } }`),
    async in(c) {
      const r = await call(c.token, `mutation($s: ID!, $e: ID!) { addReviewComment(input: { sessionID: $s, changeset: { kind: EXECUTION, executionID: $e }, body: "mine" }) { __typename ... on ReviewComment { body author { role } } } }`, { s: w.a.session, e: w.a.execution });
      expect(r.value).toEqual({ __typename: 'ReviewComment', body: 'mine', author: { role: c.role } });
    },
    async out(c) {
      const count = async () => (await g.sql`SELECT count(*)::int AS n FROM review_comments WHERE session_id = ${w.b.session}`)[0].n;
      const before = await count();
      const query = `mutation($s: ID!, $e: ID!) { addReviewComment(input: { sessionID: $s, changeset: { kind: EXECUTION, executionID: $e }, body: "intruder" }) { __typename ... on Error { message code } } }`;
      const r = await likeMissing(c.token, query, { s: w.b.session, e: w.b.execution }, 's', MISSING.session);
      expect(r.value.__typename).toBe('SessionNotFoundError');
      // B's execution named under A's session reads as a missing execution.
      const e = await likeMissing(c.token, query, { s: w.a.session, e: w.b.execution }, 'e', MISSING.execution);
      expect(e.value.__typename).toBe('ExecutionNotFoundError');
      expect(await count()).toBe(before);
    },
  },
  resolveReviewComment: {
    probe: q(`mutation { resolveReviewComment(input: { id: "${MISSING.comment}" }) { __typename } }`),
    async in(c) {
      const id = await freshComment(A);
      expect((await call(c.token, `mutation($id: ID!) { resolveReviewComment(input: { id: $id }) { __typename ... on ReviewComment { state } } }`, { id })).value).toEqual({ __typename: 'ReviewComment', state: 'RESOLVED' });
    },
    async out(c) {
      const id = await freshComment(B);
      const r = await likeMissing(c.token, `mutation($id: ID!) { resolveReviewComment(input: { id: $id }) { __typename ... on Error { message code } } }`, { id }, 'id', MISSING.comment);
      expect(r.value.__typename).toBe('CommentNotFoundError');
      expect(await COMMENT_STATE(id)).toBe('OPEN');
    },
  },
  reopenReviewComment: {
    probe: q(`mutation { reopenReviewComment(input: { id: "${MISSING.comment}" }) { __typename } }`),
    async in(c) {
      const id = await freshComment(A);
      await ok(g, `mutation($id: ID!) { resolveReviewComment(input: { id: $id }) { __typename } }`, { id });
      expect((await call(c.token, `mutation($id: ID!) { reopenReviewComment(input: { id: $id }) { __typename ... on ReviewComment { state } } }`, { id })).value).toEqual({ __typename: 'ReviewComment', state: 'OPEN' });
    },
    async out(c) {
      const id = await freshComment(B);
      await ok(g, `mutation($id: ID!) { resolveReviewComment(input: { id: $id }) { __typename } }`, { id });
      const r = await likeMissing(c.token, `mutation($id: ID!) { reopenReviewComment(input: { id: $id }) { __typename ... on Error { message code } } }`, { id }, 'id', MISSING.comment);
      expect(r.value.__typename).toBe('CommentNotFoundError');
      expect(await COMMENT_STATE(id)).toBe('RESOLVED');
    },
  },
  sendReviewComments: {
    probe: q(`mutation { sendReviewComments(input: { sessionID: "${MISSING.session}", commentIDs: ["${MISSING.comment}"] }) { __typename } }`),
    async in(c) {
      // A's host does not prompt: the send is admitted as far as its host.
      const id = await freshComment(A);
      const r = await call(c.token, `mutation($s: ID!, $c: ID!) { sendReviewComments(input: { sessionID: $s, commentIDs: [$c], timeoutMs: 1 }) { __typename ... on UnsupportedError { capability } } }`, { s: w.a.session, c: id });
      expect(r.value).toEqual({ __typename: 'UnsupportedError', capability: 'PROMPT' });
    },
    async out(c) {
      const id = await freshComment(B);
      const query = `mutation($s: ID!, $c: ID!) { sendReviewComments(input: { sessionID: $s, commentIDs: [$c], timeoutMs: 1 }) { __typename ... on Error { message code } } }`;
      const r = await likeMissing(c.token, query, { s: w.b.session, c: id }, 's', MISSING.session);
      expect(r.value.__typename).toBe('SessionNotFoundError');
      // B's comment sent in A's session reads as a missing comment.
      const m = await likeMissing(c.token, query, { s: w.a.session, c: id }, 'c', MISSING.comment);
      expect(m.value.__typename).toBe('CommentNotFoundError');
      expect((await g.sql`SELECT sent_command_id FROM review_comments WHERE id = ${id}`)[0].sentCommandId).toBeNull();
    },
  },
  compactSession: {
    probe: q(`mutation { compactSession(input: { sessionID: "${MISSING.session}" }) { __typename } }`),
    async in(c) {
      // In scope, the request goes as far as finding no host to ask.
      const r = await call(c.token, `mutation($id: ID!) { compactSession(input: { sessionID: $id, timeoutMs: 1 }) { __typename ... on HostUnavailableError { reason } } }`, { id: await freshSession(A) });
      expect(r.value).toEqual({ __typename: 'HostUnavailableError', reason: 'NO_HOST' });
    },
    async out(c) {
      const query = `mutation($id: ID!) { compactSession(input: { sessionID: $id, timeoutMs: 1 }) { __typename ... on Error { message code } } }`;
      const r = await likeMissing(c.token, query, { id: w.b.session }, 'id', MISSING.session);
      expect(r.value.__typename).toBe('SessionNotFoundError');
    },
  },
  correctMessagePart: {
    probe: q(`mutation { correctMessagePart(input: { messageID: "${MISSING.message}", partID: "${MISSING.part}", text: "x" }) { __typename } }`),
    async in(c) {
      const m = await freshMessage(A);
      const r = await call(c.token, `mutation($m: ID!, $p: ID!) { correctMessagePart(input: { messageID: $m, partID: $p, text: "corrected" }) { __typename } }`, { m: m.messageID, p: m.partID });
      expect(r.value.__typename).toBe('MessagePartCorrected');
    },
    async out(c) {
      const m = await freshMessage(B);
      const query = `mutation($m: ID!, $p: ID!) { correctMessagePart(input: { messageID: $m, partID: $p, text: "hijack" }) { __typename ... on Error { message code } } }`;
      const r = await likeMissing(c.token, query, { m: m.messageID, p: m.partID }, 'm', MISSING.message);
      expect(r.value.__typename).toBe('MessageNotFoundError');
      expect((await g.sql`SELECT text FROM parts WHERE id = ${m.partID}`)[0].text).toBe('SECRET-B text');
    },
  },
  createSession: {
    probe: q(`mutation { createSession(input: { directory: "${A}" }) { __typename } }`),
    async in(c) {
      const r = await call(c.token, `mutation { createSession(input: { directory: "${A}/new" }) { __typename ... on Session { directory } } }`);
      expect(r.value).toEqual({ __typename: 'Session', directory: `${A}/new` });
    },
    async out(c) {
      const r = await call(c.token, `mutation { createSession(input: { directory: "${B}/new" }) { __typename ... on InvalidRequestError { field } } }`);
      expect(r.value).toEqual({ __typename: 'InvalidRequestError', field: 'directory' });
      const child = await likeMissing(c.token, `mutation($id: ID!) { createSession(input: { parentID: $id }) { __typename ... on Error { message code } } }`, { id: w.b.session }, 'id', MISSING.session);
      expect(child.value.__typename).toBe('SessionNotFoundError');
      expect(await g.sql`SELECT id FROM sessions WHERE directory = ${B + '/new'}`).toEqual([]);
    },
  },
  createSnapshot: {
    probe: q(`mutation { createSnapshot(input: { sessionID: "${MISSING.session}", files: [] }) { __typename } }`),
    async in(c) {
      const r = await call(c.token, `mutation($id: ID!, $h: ID!) { createSnapshot(input: { sessionID: $id, hostID: $h, files: [] }) { __typename } }`, { id: w.a.session, h: c.host!.hostID });
      expect(r.value.__typename).toBe('Snapshot');
    },
    async out(c) {
      const query = `mutation($id: ID!, $h: ID!) { createSnapshot(input: { sessionID: $id, hostID: $h, files: [] }) { __typename ... on Error { message code } } }`;
      const r = await likeMissing(c.token, query, { id: w.b.session, h: c.host!.hostID }, 'id', MISSING.session);
      expect(r.value.__typename).toBe('SessionNotFoundError');
    },
  },
  createToken: {
    probe: q(`mutation { createToken(input: { role: reader, directory: "${A}" }) { __typename } }`),
    async in(c) {
      const sub = await call(c.token, `mutation { createToken(input: { role: admin, directory: "${A}/sub/" }) { __typename ... on CreatedToken { directory role secret } } }`);
      expect(sub.value).toMatchObject({ __typename: 'CreatedToken', directory: `${A}/sub`, role: 'admin' });
      // Without a directory: the creator's own scope, never none.
      const own = await call(c.token, `mutation { createToken(input: { role: reader }) { __typename ... on CreatedToken { directory secret } } }`);
      expect(own.value).toMatchObject({ __typename: 'CreatedToken', directory: A });
      // The new token is contained too.
      expect((await call(sub.value.secret, `query($id: ID!) { session(id: $id) { id } }`, { id: w.b.session })).value).toBeNull();
    },
    async out(c) {
      const count = async () => (await g.sql`SELECT count(*)::int AS n FROM tokens`)[0].n;
      const before = await count();
      for (const dir of [B, '/mx', '/', `${A}b`, `${A}/../b`]) {
        const r = await call(c.token, `mutation($d: String) { createToken(input: { role: admin, directory: $d }) { __typename ... on InvalidRequestError { field } } }`, { d: dir });
        expect(r.value, dir).toEqual({ __typename: 'InvalidRequestError', field: 'directory' });
      }
      expect(await count()).toBe(before);
    },
  },
  finishJob: {
    probe: q(`mutation { finishJob(input: { jobID: "${MISSING.job}", status: COMPLETED }) { __typename } }`),
    async in(c) {
      const id = await freshJob(A, c);
      expect((await call(c.token, `mutation($id: ID!) { finishJob(input: { jobID: $id, status: COMPLETED, exitCode: 0 }) { __typename ... on Job { status } } }`, { id })).value).toEqual({ __typename: 'Job', status: 'COMPLETED' });
    },
    async out(c) {
      const id = await freshJob(B);
      const r = await likeMissing(c.token, `mutation($id: ID!) { finishJob(input: { jobID: $id, status: COMPLETED, exitCode: 0 }) { __typename ... on Error { message code } } }`, { id }, 'id', MISSING.job);
      expect(r.value.__typename).toBe('JobNotFoundError');
      expect((await g.sql`SELECT status FROM jobs WHERE id = ${id}`)[0].status).toBe('RUNNING');
    },
  },
  generate: {
    probe: q(`mutation { generate(input: { sessionID: "${MISSING.session}", prompt: "x", model: { providerID: "p", modelID: "m" } }) { __typename } }`),
    async in(c) {
      const r = await call(c.token, `mutation($id: ID!) { generate(input: { sessionID: $id, prompt: "x", model: { providerID: "p", modelID: "m" }, timeoutMs: 1 }) { __typename ... on HostUnavailableError { reason } } }`, { id: await freshSession(A) });
      expect(r.value).toEqual({ __typename: 'HostUnavailableError', reason: 'NO_HOST' });
    },
    async out(c) {
      const query = `mutation($id: ID!) { generate(input: { sessionID: $id, prompt: "x", model: { providerID: "p", modelID: "m" }, timeoutMs: 1 }) { __typename ... on Error { message code } } }`;
      const r = await likeMissing(c.token, query, { id: w.b.session }, 'id', MISSING.session);
      expect(r.value.__typename).toBe('SessionNotFoundError');
    },
  },
  registerHost: {
    probe: q(`mutation { registerHost(input: { name: "h" }) { __typename } }`),
    async in(c) {
      expect((await call(c.token, `mutation { registerHost(input: { name: "mine" }) { __typename } }`)).value.__typename).toBe('Host');
      // And re-registering its own host (taking its work back).
      expect((await call(c.token, `mutation($h: ID!) { registerHost(input: { name: "again", hostID: $h, leaseMs: 600000, capabilities: { cancel: true } }) { __typename } }`, { h: c.host!.hostID })).value.__typename).toBe('Host');
    },
    async out(c) {
      // Taking over B's host (registered by another token) is refused like an unknown host.
      const query = `mutation($h: ID!) { registerHost(input: { name: "takeover", hostID: $h }) { __typename ... on Error { message code } } }`;
      const r = await likeMissing(c.token, query, { h: hostU.hostID }, 'h', MISSING.host);
      expect(r.value.__typename).toBe('HostNotFoundError');
      expect((await g.sql`SELECT name FROM hosts WHERE id = ${hostU.hostID}`)[0].name).toBe('test-host');
    },
  },
  removeSession: {
    probe: q(`mutation { removeSession(input: { sessionID: "${MISSING.session}" }) { __typename } }`),
    async in(c) {
      const id = await freshSession(A);
      expect((await call(c.token, `mutation($id: ID!) { removeSession(input: { sessionID: $id }) { __typename } }`, { id })).value.__typename).toBe('SessionRemoved');
    },
    async out(c) {
      const id = await freshSession(B);
      const r = await likeMissing(c.token, `mutation($id: ID!) { removeSession(input: { sessionID: $id }) { __typename ... on Error { message code } } }`, { id }, 'id', MISSING.session);
      expect(r.value.__typename).toBe('SessionNotFoundError');
      expect(await g.sql`SELECT id FROM sessions WHERE id = ${id}`).toHaveLength(1);
    },
  },
  renewHostLease: {
    probe: q(`mutation { renewHostLease(input: { hostID: "${MISSING.host}" }) { __typename } }`),
    async in(c) {
      expect((await call(c.token, `mutation($h: ID!) { renewHostLease(input: { hostID: $h }) { __typename } }`, { h: c.host!.hostID })).value.__typename).toBe('Host');
    },
    async out(c) {
      const before = await g.sql`SELECT lease_expires_at FROM hosts WHERE id = ${hostU.hostID}`;
      const r = await likeMissing(c.token, `mutation($h: ID!) { renewHostLease(input: { hostID: $h }) { __typename ... on Error { message code } } }`, { h: hostU.hostID }, 'h', MISSING.host);
      expect(r.value.__typename).toBe('HostNotFoundError');
      expect(await g.sql`SELECT lease_expires_at FROM hosts WHERE id = ${hostU.hostID}`).toEqual(before);
    },
  },
  replyHostCommand: {
    probe: q(`mutation { replyHostCommand(input: { commandID: "${MISSING.command}", error: "x" }) { __typename } }`),
    async in(c) {
      // Its own command in scope is known: the answer names its kind (nothing to reply to an interrupt).
      const id = await freshCommand(A, c.host!);
      const r = await call(c.token, `mutation($id: ID!) { replyHostCommand(input: { commandID: $id, error: "x" }) { __typename ... on Error { message } } }`, { id });
      expect(r.value.__typename).toBe('InvalidRequestError');
      expect(r.value.message).toContain('INTERRUPT_EXECUTION');
    },
    async out(c) {
      const id = await freshCommand(B, c.host!);
      const query = `mutation($id: ID!) { replyHostCommand(input: { commandID: $id, error: "x" }) { __typename ... on Error { message code } ... on InvalidRequestError { field } } }`;
      const r = await likeMissing(c.token, query, { id }, 'id', MISSING.command);
      expect(r.value).toMatchObject({ __typename: 'InvalidRequestError', field: 'commandID' });
      expect(r.value.message).not.toContain('INTERRUPT');
    },
  },
  restoreJob: {
    probe: q(`mutation { restoreJob(input: { jobID: "${MISSING.job}", hostID: "${MISSING.host}" }) { __typename } }`),
    async in(c) {
      const id = await freshJob(A, c);
      const r = await call(c.token, `mutation($id: ID!, $h: ID!) { restoreJob(input: { jobID: $id, hostID: $h }) { __typename } }`, { id, h: c.host!.hostID });
      expect(['Job', 'InvalidRequestError']).toContain(r.value.__typename); // found: restored, or "not lost"
    },
    async out(c) {
      const id = await freshJob(B);
      const query = `mutation($id: ID!, $h: ID!) { restoreJob(input: { jobID: $id, hostID: $h }) { __typename ... on Error { message code } } }`;
      const r = await likeMissing(c.token, query, { id, h: c.host!.hostID }, 'id', MISSING.job);
      expect(r.value.__typename).toBe('JobNotFoundError');
    },
  },
  retractMessage: {
    probe: q(`mutation { retractMessage(input: { messageID: "${MISSING.message}" }) { __typename } }`),
    async in(c) {
      const m = await freshMessage(A);
      expect((await call(c.token, `mutation($m: ID!) { retractMessage(input: { messageID: $m }) { __typename } }`, { m: m.messageID })).value.__typename).toBe('MessageRetracted');
    },
    async out(c) {
      const m = await freshMessage(B);
      const r = await likeMissing(c.token, `mutation($m: ID!) { retractMessage(input: { messageID: $m }) { __typename ... on Error { message code } } }`, { m: m.messageID }, 'm', MISSING.message);
      expect(r.value.__typename).toBe('MessageNotFoundError');
      expect(await g.sql`SELECT id FROM messages WHERE id = ${m.messageID} AND retracted_at IS NULL`).toHaveLength(1);
    },
  },
  revokeToken: {
    probe: q(`mutation { revokeToken(tokenID: "tok_missing") }`),
    async in(c) {
      const t = await ok(g, `mutation { createToken(input: { role: reader, directory: "${A}/x" }) { ... on CreatedToken { id } } }`);
      expect((await call(c.token, `mutation($id: ID!) { revokeToken(tokenID: $id) }`, { id: t.id })).value).toBe(true);
    },
    async out(c) {
      for (const input of [`{ role: reader, directory: "${B}" }`, `{ role: admin }`, `{ role: reader, directory: "${A}b" }`]) {
        const t = await ok(g, `mutation { createToken(input: ${input}) { ... on CreatedToken { id secret } } }`);
        expect((await call(c.token, `mutation($id: ID!) { revokeToken(tokenID: $id) }`, { id: t.id })).value, input).toBe(false);
        expect((await g.gql(`{ __typename }`, undefined, t.secret)).status, input).toBe(200);
      }
    },
  },
  sealSession: {
    probe: q(`mutation { sealSession(input: { sessionID: "${MISSING.session}" }) { __typename } }`),
    async in(c) {
      const r = await call(c.token, `mutation($id: ID!) { sealSession(input: { sessionID: $id, timeoutMs: 0 }) { __typename } }`, { id: await freshSession(A) });
      expect(r.value.__typename).toBe('SessionSealed');
    },
    async out(c) {
      const id = await freshSession(B);
      const r = await likeMissing(c.token, `mutation($id: ID!) { sealSession(input: { sessionID: $id, timeoutMs: 0 }) { __typename ... on Error { message code } } }`, { id }, 'id', MISSING.session);
      expect(r.value.__typename).toBe('SessionNotFoundError');
      expect((await g.sql`SELECT sealed_at FROM sessions WHERE id = ${id}`)[0].sealedAt).toBeNull();
    },
  },
  setChangesetPolicy: {
    // Instance-wide: no scoped token may call it (the matrix expects FORBIDDEN for every scoped role).
    probe: q(`mutation { setChangesetPolicy(input: { retainMs: 1 }) { __typename } }`),
    async in() { throw new Error('instance-wide: never allowed to a scoped token'); },
    async out() { throw new Error('instance-wide: never allowed to a scoped token'); },
  },
  settleExecution: {
    probe: q(`mutation { settleExecution(input: { executionID: "${MISSING.execution}", status: SUCCEEDED }) { __typename } }`),
    async in(c) {
      const id = await freshRunning(A, c);
      expect((await settle(g, { token: c.token }, id)).status).toBe('SUCCEEDED');
    },
    async out(c) {
      const id = await freshRunning(B);
      const r = await likeMissing(c.token, `mutation($id: ID!) { settleExecution(input: { executionID: $id, status: SUCCEEDED }) { __typename ... on Error { message code } } }`, { id }, 'id', MISSING.execution);
      expect(r.value.__typename).toBe('ExecutionNotFoundError');
      expect((await g.sql`SELECT status FROM executions WHERE id = ${id}`)[0].status).toBe('RUNNING');
    },
  },
  reportExecutionCost: {
    probe: q(`mutation { reportExecutionCost(input: { executionID: "${MISSING.execution}", cost: 0.5 }) { __typename } }`),
    async in(c) {
      const id = await freshRunning(A, c);
      expect((await settle(g, { token: c.token }, id)).status).toBe('SUCCEEDED');
      const r = await ok(g, `mutation($id: ID!) { reportExecutionCost(input: { executionID: $id, cost: 0.5 }) { __typename } }`, { id }, c.token);
      expect(r.__typename).toBe('Execution');
    },
    async out(c) {
      const id = await freshRunning(B);
      expect((await settle(g, hostU, id)).status).toBe('SUCCEEDED');
      const r = await likeMissing(c.token, `mutation($id: ID!) { reportExecutionCost(input: { executionID: $id, cost: 0.5 }) { __typename ... on Error { message code } } }`, { id }, 'id', MISSING.execution);
      expect(r.value.__typename).toBe('ExecutionNotFoundError');
      expect((await g.sql`SELECT cost FROM executions WHERE id = ${id}`)[0].cost).toBeNull();
    },
  },
  startJob: {
    probe: q(`mutation { startJob(input: { sessionID: "${MISSING.session}", hostID: "${MISSING.host}", kind: SHELL }) { __typename } }`),
    async in(c) {
      expect((await startJob(g, c.host!, w.a.session)).__typename).toBe('Job');
    },
    async out(c) {
      const query = `mutation($id: ID!, $h: ID!) { startJob(input: { sessionID: $id, hostID: $h, kind: SHELL, title: "x" }) { __typename ... on Error { message code } } }`;
      const r = await likeMissing(c.token, query, { id: w.b.session, h: c.host!.hostID }, 'id', MISSING.session);
      expect(r.value.__typename).toBe('SessionNotFoundError');
    },
  },
  updateSession: {
    probe: q(`mutation { updateSession(input: { sessionID: "${MISSING.session}" }) { __typename } }`),
    async in(c) {
      const r = await call(c.token, `mutation($id: ID!) { updateSession(input: { sessionID: $id, title: "renamed" }) { __typename ... on Session { title } } }`, { id: w.a.session });
      expect(r.value).toEqual({ __typename: 'Session', title: 'renamed' });
    },
    async out(c) {
      const r = await likeMissing(c.token, `mutation($id: ID!) { updateSession(input: { sessionID: $id, title: "hijack" }) { __typename ... on Error { message code } } }`, { id: w.b.session }, 'id', MISSING.session);
      expect(r.value.__typename).toBe('SessionNotFoundError');
      expect((await g.sql`SELECT title FROM sessions WHERE id = ${w.b.session}`)[0].title).toBe('SECRET-B session');
    },
  },
  uploadContents: {
    probe: q(`mutation { uploadContents(input: { contents: [] }) { __typename } }`),
    async in(c) {
      const r = await call(c.token, `mutation { uploadContents(input: { contents: [] }) { __typename } }`);
      expect(r.value.__typename).toBe('ContentsUploaded');
    },
    async out(c) {
      // The content-addressed store belongs to no directory: an upload answers about its own hashes only.
      const r = await call(c.token, `mutation { uploadContents(input: { contents: [] }) { __typename } }`);
      expect(r.value.__typename).toBe('ContentsUploaded');
      noLeak(r);
    },
  },

  // ---- Subscription
  executionSettled: {
    probe: q(`subscription { executionSettled { cursor } }`),
    async in(c) {
      const sub = subscribe(g.ws(c.token), `subscription($id: ID, $after: String) { executionSettled(sessionID: $id, after: $after) { executionID } }`, { id: w.a.session, after: FROM_START });
      try {
        await sub.waitFor((ev) => ev.some((e: any) => e.executionSettled.executionID === w.a.execution));
      } finally { sub.unsubscribe(); }
    },
    async out(c) {
      // The whole log replayed from its start: B's settlement committed before A's, so once A's has
      // arrived B's would have too; it never does.
      const sub = subscribe(g.ws(c.token), `subscription($after: String) { executionSettled(after: $after) { executionID sessionID execution { id session { title } } } }`, { after: FROM_START });
      try {
        const ev = await sub.waitFor((e) => e.some((x: any) => x.executionSettled.executionID === w.a.execution));
        expect(ev.map((x: any) => x.executionSettled.executionID)).not.toContain(w.b.execution);
        noLeak(ev);
      } finally { sub.unsubscribe(); }
    },
  },
  hostCommands: {
    probe: q(`subscription { hostCommands(hostID: "${MISSING.host}") { id } }`),
    async in(c) {
      const id = await freshCommand(A, c.host!);
      const sub = subscribe(g.ws(c.token), `subscription($h: ID!) { hostCommands(hostID: $h) { id sessionID } }`, { h: c.host!.hostID });
      try { await sub.waitFor((ev) => ev.some((e: any) => e.hostCommands.id === id)); } finally { sub.unsubscribe(); }
    },
    async out(c) {
      // B's command for the caller's own host is older than A's: the stream delivers pending commands in
      // ID order, so when A's has arrived B's would have come first; it never does.
      const b = await freshCommand(B, c.host!);
      const a = await freshCommand(A, c.host!);
      const sub = subscribe(g.ws(c.token), `subscription($h: ID!) { hostCommands(hostID: $h) { id sessionID kind job { id } execution { id } } }`, { h: c.host!.hostID });
      try {
        const ev = await sub.waitFor((e) => e.some((x: any) => x.hostCommands.id === a));
        expect(ev.map((x: any) => x.hostCommands.id)).not.toContain(b);
        // Live too: B's new command is issued before A's, so once A's arrives B's would have.
        const b2 = await freshCommand(B, c.host!);
        const a2 = await freshCommand(A, c.host!);
        const live = await sub.waitFor((e) => e.some((x: any) => x.hostCommands.id === a2));
        expect(live.map((x: any) => x.hostCommands.id)).not.toContain(b2);
        noLeak(live);
      } finally { sub.unsubscribe(); }
      // Another token's host: refused like an unknown one.
      const other = subscribe(g.ws(c.token), `subscription($h: ID!) { hostCommands(hostID: $h) { id } }`, { h: hostU.hostID });
      const none = subscribe(g.ws(c.token), `subscription($h: ID!) { hostCommands(hostID: $h) { id } }`, { h: MISSING.host });
      await other.waitFor(() => other.errors.length > 0).catch(() => {});
      await none.waitFor(() => none.errors.length > 0).catch(() => {});
      expect(JSON.stringify(other.errors).split(hostU.hostID).join('<id>')).toEqual(JSON.stringify(none.errors).split(MISSING.host).join('<id>'));
      expect(other.events).toEqual([]);
    },
  },
  sessionEvents: {
    probe: q(`subscription { sessionEvents(sessionID: "${MISSING.session}") { cursor } }`),
    async in(c) {
      const sub = subscribe(g.ws(c.token), `subscription($id: ID!, $after: String) { sessionEvents(sessionID: $id, after: $after) { type sessionID } }`, { id: w.a.session, after: JOURNAL_START });
      try { await sub.waitFor((ev) => ev.some((e: any) => e.sessionEvents.type === 'session.created')); } finally { sub.unsubscribe(); }
    },
    async out(c) {
      const q2 = `subscription($id: ID!) { sessionEvents(sessionID: $id) { type message { id } } }`;
      const b = subscribe(g.ws(c.token), q2, { id: w.b.session });
      const none = subscribe(g.ws(c.token), q2, { id: MISSING.session });
      await b.waitFor(() => b.errors.length > 0).catch(() => {});
      await none.waitFor(() => none.errors.length > 0).catch(() => {});
      expect(b.errors.length).toBeGreaterThan(0);
      expect(JSON.stringify(b.errors).split(w.b.session).join('<id>')).toEqual(JSON.stringify(none.errors).split(MISSING.session).join('<id>'));
      expect(b.events).toEqual([]);
    },
  },
};

// ---- the matrix ----------------------------------------------------------------------------------------

function allowed(field: GraphQLField<unknown, unknown>, role: Role): boolean {
  const ext = (field.extensions ?? {}) as { roles?: Role[]; instanceWide?: boolean };
  return (ext.roles ?? READERS).includes(role) && !ext.instanceWide; // every token here is scoped
}

async function expectForbidden(c: Ctx, operation: string, probe: { query: string; variables?: Record<string, unknown> }) {
  if (operation !== 'subscription') {
    const r = await g.gql(probe.query, probe.variables, c.token);
    expect(r.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    expect(r.data ?? null).toBeNull();
    return;
  }
  const sub = subscribe(g.ws(c.token), probe.query, probe.variables);
  await sub.waitFor(() => sub.errors.length > 0);
  expect(JSON.stringify(sub.errors)).toContain('FORBIDDEN');
  expect(sub.events).toEqual([]);
}

const FIELDS = rootFields(schema);

describe('scope matrix', () => {
  it('has a case for every root field of the schema', () => {
    expect(FIELDS.map((f) => f.field.name).filter((n) => !CASES[n])).toEqual([]);
    expect(Object.keys(CASES).filter((n) => !FIELDS.some((f) => f.field.name === n))).toEqual([]);
  });

  for (const role of ROLES) {
    describe(`${role} token scoped to ${A}`, () => {
      for (const { operation, field } of FIELDS) {
        const name = field.name;
        if (!CASES[name]) continue;
        const mayUse = allowed(field, role);
        it(`${operation} ${name}: ${mayUse ? 'in scope works, out of scope reads as missing' : 'FORBIDDEN'}`, async () => {
          const c: Ctx = { role, token: tok[role], host: hosts[role] };
          if (!mayUse) return expectForbidden(c, operation, CASES[name].probe());
          await CASES[name].in(c);
          await CASES[name].out(c);
        }, 60_000);
      }
    });
  }

  it('an unscoped admin may still change the instance-wide policy', async () => {
    const r = await ok(g, `mutation { setChangesetPolicy(input: { graceMs: 60000 }) { __typename ... on ChangesetPolicy { graceMs } } }`);
    expect(r).toEqual({ __typename: 'ChangesetPolicy', graceMs: 60000 });
  });
});
