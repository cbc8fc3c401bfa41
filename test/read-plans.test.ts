import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { seedReads, type SeededReads } from '../bench/support/reads-data.js';
import { newId } from '../domain/ids.js';
import { buildSchema, getNamedType, isLeafType, isNonNullType, isObjectType } from 'graphql';
import { readFileSync } from 'node:fs';
import { PLANNERS } from '../resolvers/plans.js';

/**
 * Reads are planned per selection (resolvers/plans.ts): a planner per type, an entry per field. Every
 * field of the planned types in the printed schema has an entry (a field added without one fails here);
 * pages of sessions and executions read only the columns their plan asks for, and every field answers
 * on a page exactly what it answers through the whole row (the same object by ID), on rows where every
 * column is set and rows where they are null.
 */
const printed = buildSchema(readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8'));
const fieldsOf = (type: string) => {
  const t = printed.getType(type);
  if (!isObjectType(t)) throw new Error(`${type} is not an object type of schema.graphql`);
  return Object.keys(t.getFields()).sort();
};

describe('every field of a planned type has a planner entry', () => {
  for (const p of PLANNERS) {
    it(`${p.typeName}: the planner's entries are the schema's fields`, () => {
      expect([...p.fields].sort()).toEqual(fieldsOf(p.typeName));
    });
  }
  it('the planned types are those whose rows are read in part or with what they bring along', () => {
    expect(PLANNERS.map((p) => p.typeName).sort()).toEqual(['Changeset', 'Execution', 'FileChange', 'Session']);
  });
});
let g: TestGateway;
let S: SeededReads;
beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  S = await seedReads(g.sql, 101);
  // The newest session: executions with every column set, a snapshot boundary, a running one.
  const s = S.sessions[100];
  const [a, b] = [newId('snapshot', s), newId('snapshot', s)];
  await g.sql`INSERT INTO snapshots (id, session_id, host_id, file_count, byte_size) VALUES (${a}, ${s}, 'hst_bench', 3, 30), (${b}, ${s}, 'hst_bench', 4, 40)`;
  const [full, interrupted, running] = S.executions[100].slice(5, 8);
  // Their changesets are frozen (seedReads): their boundary is the snapshot pair.
  await g.sql`UPDATE executions SET start_snapshot_id = ${a}, end_snapshot_id = ${b} WHERE session_id = ${s}`;
  await g.sql`UPDATE executions SET error = 'boom', external_id = 'msg_1',
    provider_id = 'anthropic', model_id = 'claude', agent = 'build', mode = 'fast', finish_reason = 'stop', error_name = 'APIError',
    input_tokens = 10, output_tokens = 20, reasoning_tokens = 3, cache_read_tokens = 4, cache_write_tokens = 5, cost = 0.25
    WHERE session_id = ${s} AND id = ${full}`;
  await g.sql`INSERT INTO model_calls (session_id, execution_id, index, model_id, started_at, times_from, input_tokens, cost)
    VALUES (${s}, ${full}, 0, 'claude', now(), 'AGENT', 6, 0.1), (${s}, ${full}, 1, 'claude', NULL, 'HOST', 4, NULL)`;
  await g.sql`UPDATE executions SET status = 'INTERRUPTED', interrupt_reason = 'SEAL', output_tokens = 7 WHERE session_id = ${s} AND id = ${interrupted}`;
  await g.sql`UPDATE executions SET status = 'RUNNING', settled_at = NULL WHERE session_id = ${s} AND id = ${running}`;
  await g.sql`UPDATE sessions SET parent_id = ${S.sessions[0]}, metadata = ${g.sql.json({ plugin: { x: 1 } })}, host_metadata = ${g.sql.json({ opencode: { id: 'oc' } })},
    seal_requested_at = now(), last_seq = 42 WHERE id = ${s}`;
  await g.sql`UPDATE sessions SET sealed_at = now(), seal_requested_at = now() WHERE id = ${S.sessions[99]}`;
});
afterAll(async () => { await g?.stop(); });

/** A selection of each field (every field of the schema: the test below checks). */
/**
 * A selection of every field of a type: a field of a scalar or enum type is selected by its name (so a new one
 * is tested here with nothing to add); one of an object type by the selection written for it here.
 */
function selectionsOf(type: string, objects: Record<string, string>, without: string[] = []): Record<string, string> {
  const t = printed.getType(type);
  if (!isObjectType(t)) throw new Error(type);
  const out: Record<string, string> = {};
  for (const [name, field] of Object.entries(t.getFields())) {
    if (without.includes(name)) continue;
    const selection = isLeafType(getNamedType(field.type)) && !field.args.some((a) => isNonNullType(a.type)) ? name : objects[name];
    if (!selection) throw new Error(`${type}.${name}: write a selection of it in test/read-plans.test.ts`);
    out[name] = selection;
  }
  return out;
}
const EXECUTION_FIELDS = selectionsOf('Execution', {
  session: 'session { id title }', model: 'model { providerID modelID }',
  usage: 'usage { inputTokens outputTokens reasoningTokens cacheReadTokens cacheWriteTokens cost }',
  messages: 'messages(first: 2) { edges { node { id } } }', jobs: 'jobs(first: 2) { edges { node { id } } }',
  modelCalls: 'modelCalls { index model { modelID } startedAt timesFrom usage { inputTokens cost } }',
  boundary: 'boundary { __typename ... on SnapshotBoundary { start { id fileCount } end { id } } ... on BoundaryUnavailable { reason detail } }',
  changeset: 'changeset { fileCount additions deletions coverage { __typename } files { path previousPath similarity attribution { changedBy { __typename } } } patch comments { id body anchor { path line } } }',
  driftBefore: 'driftBefore { fileCount additions deletions coverage { __typename ... on CoverageUnavailable { reason detail } } files { path } patch comments { id } }',
});
// (Session.changes takes the executions of its range: test/session-changes.test.ts; Session.blame one of its executions:
// test/attribution.test.ts.)
const SESSION_FIELDS = selectionsOf('Session', {
  parent: 'parent { id title }', children: 'children(first: 2) { edges { node { id } } }',
  executions: 'executions(first: 2) { edges { node { id status } } }', runningExecution: 'runningExecution { id }',
  lastSettledExecution: 'lastSettledExecution { id }', messages: 'messages(first: 2) { edges { node { id } } }',
  jobs: 'jobs(first: 2) { edges { node { id } } }', context: 'context { messageID role text }',
  comments: 'comments(first: 2) { edges { node { id state } } }',
}, ['changes', 'blame']);

const ok = async (query: string) => {
  const r = await g.gql(query);
  expect(r.errors).toBeUndefined();
  return r.data;
};

/** The statements of the request that read a page of `table` (the gateway's pool logs their text). */
async function pageStatements(query: string, table: string) {
  g.queries.reset();
  await ok(query);
  return g.queries.log.filter((q) => new RegExp(`FROM "?${table}"?\\b`).test(q));
}

describe('pages read only the columns their plan asks for', () => {
  it('every listed Execution field answers on a page what it answers through the whole row', async () => {
    const sid = S.sessions[100];
    for (const [name, sel] of Object.entries(EXECUTION_FIELDS)) {
      const page = await ok(`{ session(id: "${sid}") { executions(first: 8) { edges { node { id ${sel} } } } } }`);
      const nodes = page.session.executions.edges.map((e: any) => e.node);
      expect(nodes.length, name).toBe(8);
      const byId = await ok(`{ ${nodes.map((n: any, i: number) => `e${i}: execution(id: "${n.id}") { id ${sel} }`).join(' ')} }`);
      expect(nodes, name).toEqual(nodes.map((_: unknown, i: number) => byId[`e${i}`]));
    }
  });

  it('every listed Session field answers on a page what it answers through the whole row', async () => {
    for (const [name, sel] of Object.entries(SESSION_FIELDS)) {
      const page = await ok(`{ sessions(first: 3) { edges { node { id ${sel} } } } }`);
      const nodes = page.sessions.edges.map((e: any) => e.node);
      expect(nodes.map((n: any) => n.id), name).toEqual([S.sessions[100], S.sessions[99], S.sessions[98]]);
      const byId = await ok(`{ ${nodes.map((n: any, i: number) => `s${i}: session(id: "${n.id}") { id ${sel} }`).join(' ')} }`);
      expect(nodes, name).toEqual(nodes.map((_: unknown, i: number) => byId[`s${i}`]));
    }
  });

  it('a list read names only the columns its plan reads, those of a changeset\'s execution included', async () => {
    const list = `{ sessions(first: 5) { edges { node { id title executions(first: 5) { edges { node { id sequence settledAt changeset { fileCount } } } } } } } }`;
    // One statement: the sessions, each with its page of executions and their changeset rows (loaders.ts sessionsWithExecutions).
    const statements = await pageStatements(list, 'sessions');
    expect(statements).toHaveLength(1);
    // Counts are all it reads of each changeset: the six columns of ChangesetCounts, no jsonb, no frozen_at.
    // (A session's columns but its ID on its first row only.)
    expect(statements[0]).toContain('SELECT s.id, CASE WHEN p.nth > 1 THEN NULL ELSE s."title" END, "p"."id","p"."sequence","p"."session_id","p"."settled_at","p"."status" , "p"."cs_execution_id","p"."cs_coverage","p"."cs_file_count","p"."cs_additions","p"."cs_deletions","p"."cs_pruned_at" FROM');
    expect(statements[0]).toContain('FROM (SELECT "id","title" FROM sessions');
    expect(statements[0]).toContain('SELECT "x"."id","x"."sequence","x"."session_id","x"."settled_at","x"."status" , c.execution_id AS cs_execution_id, c.coverage AS cs_coverage, c.file_count AS cs_file_count, c.additions AS cs_additions, c.deletions AS cs_deletions, c.pruned_at AS cs_pruned_at FROM');
    expect(await pageStatements(list, 'executions')).toEqual(statements);
    // Coverage (or a boundary) reads the whole changeset row.
    for (const sel of ['changeset { fileCount coverage { __typename } }', 'boundary { __typename } changeset { fileCount }']) {
      const [whole] = await pageStatements(list.replace('changeset { fileCount }', sel), 'sessions');
      expect(whole, sel).toContain('c.omissions AS cs_omissions');
      expect(whole, sel).toContain('"p"."cs_omissions"');
    }

    // Session.context reads nothing of the session's row; Changeset.execution hands its execution on, so the columns
    // its selection reads are read with the execution's own, and no others.
    const handed = `{ sessions(first: 2) { edges { node { id context { __typename } executions(first: 3) { edges { node { id changeset { execution { usage { cost } model { modelID } } } } } } } } } }`;
    const [one] = await pageStatements(handed, 'sessions');
    expect(one).toContain('FROM (SELECT "id" FROM sessions');
    expect(one).toContain('SELECT "x"."cache_read_tokens","x"."cache_write_1h_tokens","x"."cache_write_5m_tokens","x"."cache_write_tokens","x"."cost","x"."id","x"."input_tokens","x"."model_id","x"."output_tokens","x"."provider_id","x"."reasoning_tokens","x"."sequence","x"."session_id","x"."status" , c.execution_id');
    const d = await ok(`{ session(id: "${S.sessions[100]}") { executions(first: 3) { edges { node { id changeset { execution { id usage { cost } model { modelID } } } } } } } }`);
    const full = d.session.executions.edges.find((e: any) => e.node.id === S.executions[100][5]).node;
    expect(full.changeset.execution).toEqual({ id: S.executions[100][5], usage: { cost: 0.25 }, model: { modelID: 'claude' } });
  });

  it('rows read in part never answer another field of the request: the same session by ID after its page, executions by ID and by node', async () => {
    const full = S.executions[100][5];
    // The sessions of the page are read by ID again (Execution.session) after the page's partial rows came back.
    const d = await ok(`{ sessions(first: 1) { edges { node { id executions(first: 1) { edges { node { session { metadata status } } } } } } }
      x: execution(id: "${full}") { usage { cost } model { modelID } agent }
      n: node(id: "${full}") { ... on Execution { errorName } } }`);
    expect(d.sessions.edges[0].node.executions.edges[0].node.session).toEqual({ metadata: { plugin: { x: 1 }, opencode: { id: 'oc' } }, status: 'SEALING' });
    expect(d.x).toEqual({ usage: { cost: 0.25 }, model: { modelID: 'claude' }, agent: 'build' });
    expect(d.n).toEqual({ errorName: 'APIError' });
  });

  it('fragments and inline fragments count as selections', async () => {
    const sid = S.sessions[100];
    const d = await ok(`{ session(id: "${sid}") { executions(first: 8) { edges { node { ...E ... on Execution { usage { cost } } } } } } }
      fragment E on Execution { id model { providerID } agent }`);
    const full = d.session.executions.edges.find((e: any) => e.node.id === S.executions[100][5]).node;
    expect(full).toEqual({ id: S.executions[100][5], model: { providerID: 'anthropic' }, agent: 'build', usage: { cost: 0.25 } });
  });
});
