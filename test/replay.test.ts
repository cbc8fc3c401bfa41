import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { SYSTEM } from '../domain/access.js';
import { correctMessagePart, retractMessage } from '../domain/corrections.js';
import { GatewayError } from '../domain/errors.js';
import { beginExecution, reportExecutionCost, settleExecution } from '../domain/executions.js';
import { appendMessage, type PartInput } from '../domain/messages.js';
import { compareProjections, rebuildProjections, ReplayError, replayIntoSchema } from '../domain/replay.js';
import { createSession, removeSession, updateSession } from '../domain/sessions.js';
import { lockSession } from '../domain/session-lock.js';
import type { Origin } from '../domain/rows.js';
import { registerHost, renewHostLease, sweepExpiredLeases } from '../domain/hosts.js';
import { backgroundJob, finishJob, restoreJob, startJob } from '../domain/jobs.js';
import { sealSession } from '../domain/seal.js';
import { compactSession, replyCompaction } from '../domain/compaction.js';
import type { HostRequestRow } from '../domain/host-requests.js';
import { EVENT_TYPES, JOURNAL_TABLES } from '../domain/events/catalogue.js';
import { commitEvent } from '../domain/events/commit.js';
import { addReviewComment, reopenReviewComment, replyPrompt, resolveReviewComment, sendReviewComments } from '../domain/review-comments.js';
import { PayloadError } from '../domain/events/shape.js';
import { applyMigration, migrationFiles } from '../db/migrate.js';

let g: TestGateway;
let hostID: string;
/** A second host, whose lease the history lets lapse (lease sweeps); it cannot cancel and manages sessions. */
let flaky: string;
beforeAll(async () => {
  g = await startTestGateway();
  hostID = (await registerHost(g.sql, SYSTEM, { name: 'replay-host', leaseMs: 600_000, capabilities: { cancel: true, compact: true, prompt: true } })).id;
  flaky = (await registerHost(g.sql, SYSTEM, { name: 'flaky-host', leaseMs: 600_000, capabilities: { cancel: false, exclusiveAdmission: false } })).id;
});
afterAll(async () => { await g?.stop(); });

/** Every journal table, every column, exactly (timestamps with microseconds, jsonb by value). */
async function projections() {
  const out: Record<string, unknown[]> = {};
  for (const t of JOURNAL_TABLES) {
    const [r] = await g.sql`SELECT coalesce(jsonb_agg(to_jsonb(x) ORDER BY to_jsonb(x)::text), '[]') AS rows FROM ${g.sql(t)} x`;
    out[t] = r.rows;
  }
  return out;
}

// Text without lone surrogates (Postgres refuses them in jsonb) and without NUL (refused by validation
// anyway, which the history also exercises through the plain 'binary-ascii' strings).
const text = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary-ascii', maxLength: 20 }),
  fc.constantFrom('', ' ', 'multi\nline', '{"json": "looking"}', '\\u0000'),
);
const json = fc.jsonValue({ maxDepth: 3 }).filter((v) => !JSON.stringify(v).includes('\\u0000') && !/\\ud[89a-f]/i.test(JSON.stringify(v)));
const part: fc.Arbitrary<PartInput> = fc.oneof(
  fc.record({ type: fc.constant('TEXT' as const), text }),
  fc.record({
    type: fc.constant('TOOL' as const),
    tool: fc.constantFrom('bash', 'edit', 'read'),
    input: fc.option(json, { nil: undefined }),
    output: fc.option(text, { nil: null }),
    status: fc.option(fc.constantFrom('completed', 'error'), { nil: null }),
  }),
  fc.record({ type: fc.constant('FILE' as const), path: fc.constantFrom('/w/a.txt', '/w/b.png'), mime: fc.option(fc.constantFrom('text/plain', 'image/png'), { nil: null }) }),
);
const pick = fc.nat({ max: 1000 });
const op = fc.oneof(
  { weight: 3, arbitrary: fc.record({ k: fc.constant('session' as const), parent: fc.option(pick, { nil: null }), owned: fc.boolean() }) },
  {
    weight: 6,
    arbitrary: fc.record({
      k: fc.constant('append' as const), s: pick, parts: fc.array(part, { minLength: 1, maxLength: 4 }),
      origin: fc.constantFrom<Origin>('PROMPT', 'SYNTHETIC', 'MODEL', 'HOST'), inExecution: fc.boolean(),
    }),
  },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('correct' as const), m: pick, p: pick, text }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('retract' as const), m: pick, reason: fc.option(text, { nil: null }) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('begin' as const), s: pick, other: fc.boolean(), model: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant('settle' as const), s: pick, status: fc.constantFrom('SUCCEEDED', 'FAILED', 'INTERRUPTED' as const),
      tokens: fc.option(fc.nat({ max: 100_000 }), { nil: null }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('cost' as const), e: pick, cost: fc.double({ min: 0, max: 10, noNaN: true }) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('job' as const), s: pick, other: fc.boolean(), background: fc.boolean() }) },
  {
    weight: 5,
    arbitrary: fc.record({
      k: fc.constant('jobChange' as const), j: pick,
      how: fc.constantFrom('background', 'COMPLETED', 'ERROR', 'CANCELLED', 'LOST', 'restore' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('update' as const), s: pick, title: text, metadata: fc.option(fc.dictionary(fc.string({ maxLength: 5 }), fc.integer()), { nil: null }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('remove' as const), s: pick }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('seal' as const), s: pick }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('compact' as const), s: pick }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('sweep' as const) }) },
  {
    weight: 3,
    arbitrary: fc.record({ k: fc.constant('comment' as const), s: pick, e: pick, kind: fc.constantFrom('EXECUTION', 'RANGE', 'DRIFT' as const), body: text }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('commentState' as const), c: pick, resolve: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('send' as const), s: pick }) },
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

/**
 * Every history starts with the rare paths taken once for sure: a session that ran a step on the
 * compacting host, was compacted, had a message retracted and a job moved to the background, and was
 * sealed while a step and the job ran (cancel and interrupt issued); a child removed; an idle session
 * sealed; a step and a job of the flaky host swept when its lease lapsed, and the job restored; a
 * session updated; a job finished. (So the check below that every kind of event was journaled cannot depend on luck.)
 */
const opening: Op[] = [
  { k: 'session', parent: null, owned: false },
  { k: 'session', parent: 0, owned: false },
  { k: 'remove', s: 1 },
  { k: 'begin', s: 0, other: false, model: true },
  { k: 'append', s: 0, parts: [{ type: 'TEXT', text: 'hello' }], origin: 'MODEL', inExecution: true },
  { k: 'settle', s: 0, status: 'SUCCEEDED', tokens: 12 },
  { k: 'correct', m: 0, p: 0, text: 'hello, corrected' },
  { k: 'compact', s: 0 },
  { k: 'comment', s: 0, e: 0, kind: 'EXECUTION', body: 'review this' },
  { k: 'comment', s: 0, e: 0, kind: 'EXECUTION', body: 'and this' },
  { k: 'commentState', c: 0, resolve: true },
  { k: 'commentState', c: 0, resolve: false },
  { k: 'send', s: 0 },
  { k: 'settle', s: 0, status: 'SUCCEEDED', tokens: null },
  { k: 'cost', e: 0, cost: 0.0125 },
  { k: 'retract', m: 0, reason: 'opening' },
  { k: 'job', s: 0, other: false, background: false },
  { k: 'jobChange', j: 0, how: 'background' },
  { k: 'begin', s: 0, other: false, model: false },
  { k: 'seal', s: 0 },
  { k: 'session', parent: null, owned: false },
  { k: 'seal', s: 1 },
  { k: 'session', parent: null, owned: false },
  { k: 'begin', s: 2, other: true, model: false },
  { k: 'job', s: 2, other: true, background: false },
  { k: 'sweep' },
  { k: 'jobChange', j: 0, how: 'restore' },
  { k: 'update', s: 2, title: 'renamed', metadata: { n: 1 } },
  { k: 'job', s: 3, other: false, background: false },
  { k: 'jobChange', j: 0, how: 'COMPLETED' },
];

/**
 * And every history ends with rows of the rare kinds the random part may have removed again (a removed
 * session takes its compactions, retractions and usage with it): a session that ran a step with usage,
 * had its message retracted and was compacted; a child removed (a tombstone); an idle session sealed.
 * So the replay is always compared on tables that hold such rows. (`-1`: the newest session or message.)
 */
const closing: Op[] = [
  { k: 'session', parent: null, owned: false },
  { k: 'begin', s: -1, other: false, model: true },
  { k: 'append', s: -1, parts: [{ type: 'TEXT', text: 'closing' }], origin: 'MODEL', inExecution: true },
  { k: 'settle', s: -1, status: 'SUCCEEDED', tokens: 5 },
  { k: 'retract', m: -1, reason: 'closing' },
  { k: 'compact', s: -1 },
  { k: 'comment', s: -1, e: 0, kind: 'EXECUTION', body: 'closing review' },
  { k: 'comment', s: -1, e: 0, kind: 'RANGE', body: 'on the range' },
  { k: 'commentState', c: -1, resolve: true },
  { k: 'send', s: -1 },
  { k: 'session', parent: -1, owned: false },
  { k: 'remove', s: -1 },
  { k: 'session', parent: null, owned: false },
  { k: 'seal', s: -1 },
];

/** Answers the pending COMPACT_SESSION command of the session as its host would (through the domain function). */
async function replyAsHost(sessionID: string, done: Promise<unknown>) {
  let settled = false;
  void done.then(() => {}, () => {}).finally(() => { settled = true; });
  // Wait for the positive signal: the command row committed by compactSession's admission (or the call ended).
  for (;;) {
    const [c] = await g.sql<HostRequestRow[]>`
      SELECT * FROM host_commands WHERE session_id = ${sessionID} AND kind = 'COMPACT_SESSION' AND replied_at IS NULL AND timed_out_at IS NULL`;
    if (c) return replyCompaction(g.sql, SYSTEM, c, { summary: `summary of ${sessionID}` }, null).catch(() => null);
    if (settled) return null;
    await new Promise((r) => setImmediate(r));
  }
}

/** Begins the execution of the session's pending PROMPT command as its host would (or replies that it cannot). */
async function startPromptAsHost(sessionID: string, done: Promise<unknown>) {
  let settled = false;
  void done.then(() => {}, () => {}).finally(() => { settled = true; });
  for (;;) {
    const [c] = await g.sql<HostRequestRow[]>`
      SELECT * FROM host_commands WHERE session_id = ${sessionID} AND kind = 'PROMPT' AND replied_at IS NULL AND timed_out_at IS NULL`;
    if (c) {
      return beginExecution(g.sql, SYSTEM, { sessionID, hostID: c.hostId, trigger: 'PROMPT', commandID: c.id })
        .catch((e) => replyPrompt(g.sql, c, null, String(e?.message ?? e)).catch(() => null));
    }
    if (settled) return null;
    await new Promise((r) => setImmediate(r));
  }
}

/** Runs a random history through the live write path (the domain functions the resolvers call). */
async function run(ops: Op[]) {
  const sessions: string[] = [];
  const at = <T>(xs: readonly T[], i: number) => (xs.length ? xs[((i % xs.length) + xs.length) % xs.length] : undefined);
  const running = async (sessionID: string) =>
    (await g.sql<{ id: string }[]>`SELECT id FROM executions WHERE session_id = ${sessionID} AND status = 'RUNNING'`)[0]?.id ?? null;
  const bus = { bus: g.app.gateway.bus };
  for (const o of ops) {
    try {
      switch (o.k) {
        case 'session': {
          const parentID = o.parent === null ? null : at(sessions, o.parent) ?? null;
          sessions.push((await createSession(g.sql, SYSTEM, {
            parentID, directory: parentID ? null : '/w', title: 't', ...(o.owned ? { hostID: flaky, hostMetadata: { runtime: { id: 'r' } } } : {}),
          })).id);
          break;
        }
        case 'append': {
          const sessionID = at(sessions, o.s);
          if (!sessionID) break;
          const executionID = o.inExecution ? await running(sessionID) : null;
          await appendMessage(g.sql, SYSTEM, {
            sessionID, executionID, origin: o.origin, role: o.origin === 'MODEL' ? 'ASSISTANT' : 'USER', parts: o.parts,
          });
          break;
        }
        case 'correct': {
          const ms = await g.sql`SELECT id FROM messages ORDER BY id`;
          const m = at(ms, o.m);
          if (!m) break;
          const ps = await g.sql`SELECT id FROM parts WHERE message_id = ${m.id} ORDER BY index`;
          await correctMessagePart(g.sql, SYSTEM, { messageID: m.id, partID: at(ps, o.p)!.id, text: o.text });
          break;
        }
        case 'retract': {
          const ms = await g.sql`SELECT id FROM messages ORDER BY id`;
          const m = at(ms, o.m);
          if (m) await retractMessage(g.sql, SYSTEM, { messageID: m.id, reason: o.reason });
          break;
        }
        case 'begin': {
          const sessionID = at(sessions, o.s);
          if (!sessionID) break;
          await beginExecution(g.sql, SYSTEM, {
            sessionID, hostID: o.other ? flaky : hostID, trigger: 'PROMPT', externalID: o.model ? 'msg_ext' : null,
            ...(o.model ? { model: { providerID: 'p', modelID: 'm' }, agent: 'build', mode: 'build', startCaptureError: 'no worktree' } : {}),
          });
          break;
        }
        case 'settle': {
          const sessionID = at(sessions, o.s);
          const exe = sessionID && await running(sessionID);
          if (!exe) break;
          await settleExecution(g.sql, SYSTEM, {
            executionID: exe, status: o.status, interruptReason: o.status === 'INTERRUPTED' ? 'USER' : null,
            error: o.status === 'FAILED' ? 'boom' : null, endCaptureError: 'not captured',
            usage: o.tokens === null ? null : { inputTokens: o.tokens, outputTokens: 7, cost: 0.25 },
            finishReason: o.tokens === null ? null : 'stop', model: o.tokens === null ? null : { providerID: 'p2', modelID: 'm2' },
            modelCalls: o.tokens === null ? null : [
              { model: { providerID: 'p2', modelID: 'm1' }, startedAt: '2026-12-01T23:59:59.123456Z', endedAt: '2026-12-02T00:00:01Z', timesFrom: 'AGENT', finishReason: 'tool_use', usage: { inputTokens: o.tokens, outputTokens: 3 } },
              { externalID: 'resp_2', model: { providerID: 'p2', modelID: 'm2' }, timesFrom: 'HOST', finishReason: 'stop', usage: { outputTokens: 4, cost: 0.25 } },
            ],
          });
          break;
        }
        case 'job': {
          const sessionID = at(sessions, o.s);
          if (!sessionID) break;
          await startJob(g.sql, SYSTEM, {
            sessionID, hostID: o.other ? flaky : hostID, kind: 'SHELL', title: 'job', command: 'sleep 1',
            background: o.background, executionID: await running(sessionID),
          });
          break;
        }
        case 'jobChange': {
          // A job the change applies to, when there is one (otherwise any: the refusal is part of the history too).
          const want = o.how === 'restore' ? ['LOST'] : o.how === 'background' ? ['RUNNING'] : ['RUNNING', 'CANCELLING', 'LOST'];
          const js = await g.sql<{ id: string; hostId: string }[]>`
            SELECT id, host_id FROM jobs ORDER BY (status = ANY(${want}) AND NOT (${o.how === 'background'} AND background)) DESC, id`;
          const fit = await g.sql`SELECT count(*)::int AS n FROM jobs WHERE status = ANY(${want})`;
          const j = at(js.slice(0, fit[0].n || js.length), o.j);
          if (!j) break;
          if (o.how === 'background') await backgroundJob(g.sql, SYSTEM, { jobID: j.id });
          else if (o.how === 'restore') await restoreJob(g.sql, SYSTEM, { jobID: j.id, hostID: j.hostId });
          else await finishJob(g.sql, SYSTEM, { jobID: j.id, status: o.how, exitCode: o.how === 'COMPLETED' ? 0 : o.how === 'ERROR' ? 2 : null });
          break;
        }
        case 'update': {
          const sessionID = at(sessions, o.s);
          if (sessionID) await updateSession(g.sql, SYSTEM, { sessionID, title: o.title, metadata: o.metadata });
          break;
        }
        case 'remove': {
          const sessionID = at(sessions, o.s);
          if (!sessionID) break;
          const r = await removeSession(g.sql, SYSTEM, { sessionID });
          for (const id of r.removedSessionIDs) sessions.splice(sessions.indexOf(id), 1);
          break;
        }
        case 'seal': {
          // No wait: one authoritative step (seal requested, cancels and interrupts issued, or SEALED).
          const sessionID = at(sessions, o.s);
          if (sessionID) await sealSession(g.sql, SYSTEM, { sessionID, timeoutMs: 0 }, bus);
          break;
        }
        case 'compact': {
          // Preferably a session the compacting host owns, idle, with messages.
          const fit = await g.sql<{ id: string }[]>`
            SELECT s.id FROM sessions s WHERE s.host_id = ${hostID} AND s.seal_requested_at IS NULL
              AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)
              AND NOT EXISTS (SELECT 1 FROM executions e WHERE e.session_id = s.id AND e.status = 'RUNNING') ORDER BY s.id`;
          const sessionID = at(fit.length ? fit.map((r) => r.id) : sessions, o.s);
          if (!sessionID) break;
          const done = compactSession(g.sql, SYSTEM, { sessionID, timeoutMs: 30_000 }, bus);
          const [r] = await Promise.allSettled([done, replyAsHost(sessionID, done)]);
          if (r.status === 'rejected') throw r.reason;
          break;
        }
        case 'comment': {
          const sessionID = at(sessions, o.s);
          if (!sessionID) break;
          const es = await g.sql<{ id: string }[]>`SELECT id FROM executions WHERE session_id = ${sessionID} ORDER BY sequence`;
          const e = at(es, o.e);
          if (!e) break;
          await addReviewComment(g.sql, SYSTEM, {
            sessionID, changeset: { kind: o.kind, executionID: e.id, fromExecutionID: o.kind === 'RANGE' ? es[0].id : null }, body: o.body,
          });
          break;
        }
        case 'commentState': {
          const c = at(await g.sql<{ id: string }[]>`SELECT id FROM review_comments ORDER BY id`, o.c);
          if (!c) break;
          await (o.resolve ? resolveReviewComment : reopenReviewComment)(g.sql, SYSTEM, c.id);
          break;
        }
        case 'cost': {
          // The agent's cost of a settled execution reported late (once: a second report is refused).
          const settled = await g.sql<{ id: string }[]>`SELECT id FROM executions WHERE status <> 'RUNNING' ORDER BY (cost IS NULL) DESC, id`;
          const e = at(settled, o.e);
          if (e) await reportExecutionCost(g.sql, SYSTEM, { executionID: e.id, cost: o.cost });
          break;
        }
        case 'send': {
          const sessionID = at(sessions, o.s);
          if (!sessionID) break;
          const open = await g.sql<{ id: string }[]>`
            SELECT id FROM review_comments WHERE session_id = ${sessionID} AND state = 'OPEN' AND answered_by_execution_id IS NULL ORDER BY id LIMIT 3`;
          const done = sendReviewComments(g.sql, SYSTEM, { sessionID, commentIDs: open.length ? open.map((c) => c.id) : ['cmt_0000000000000missing0000'], timeoutMs: 30_000 }, bus);
          const [r] = await Promise.allSettled([done, startPromptAsHost(sessionID, done)]);
          if (r.status === 'rejected') throw r.reason;
          break;
        }
        case 'sweep': {
          // The flaky host's lease lapses (hosts are outside the journal); whichever sweeper runs first marks its work.
          await g.sql`UPDATE hosts SET lease_expires_at = now() - interval '1 second' WHERE id = ${flaky}`;
          await sweepExpiredLeases(g.sql);
          await renewHostLease(g.sql, SYSTEM, { hostID: flaky });
          break;
        }
      }
    } catch (e) {
      // Expected refusals (busy, sealed, invalid text, retracted, not a text part...) commit nothing; anything else is a bug.
      if (!(e instanceof GatewayError)) throw e;
    }
  }
}

describe('replay', () => {
  it('rebuilds every table the journal owns, row for row, after long random histories of every kind of operation', async () => {
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 40, maxLength: 80 }), async (ops) => {
        await run([...opening, ...ops, ...closing]);
        const s = await replayIntoSchema(g.sql, 'replay_check');
        expect(s.inexact.size).toBe(0);
        const diffs = await compareProjections(g.sql, 'replay_check', { limit: 5 });
        expect(diffs).toEqual([]);
        const [counts] = await g.sql`SELECT (SELECT count(*) FROM sessions)::int AS s, (SELECT count(*) FROM executions)::int AS e,
          (SELECT count(*) FROM jobs)::int AS j, (SELECT count(*) FROM messages)::int AS m, (SELECT count(*) FROM parts)::int AS p,
          (SELECT count(*) FROM review_comments)::int AS c`;
        expect([s.rows.sessions, s.rows.executions, s.rows.jobs, s.rows.messages, s.rows.parts, s.rows.review_comments])
          .toEqual([counts.s, counts.e, counts.j, counts.m, counts.p, counts.c]);
        checked++;
      }),
      { numRuns: 3, endOnFailure: true },
    );
    expect(checked).toBe(3);
    // The histories really did exercise every kind of event of the catalogue but pruning.
    const kinds = await g.sql`SELECT type, count(*)::int AS n FROM journal GROUP BY type`;
    const by = Object.fromEntries(kinds.map((k) => [k.type, k.n]));
    const missing = EVENT_TYPES.filter((t) => !['changeset.pruned', 'session.admissions_closed'].includes(t) && !by[t]);
    expect(missing).toEqual([]);
    const [seen] = await g.sql`SELECT (SELECT count(*) FROM messages WHERE retracted_at IS NOT NULL)::int AS retracted,
      (SELECT count(*) FROM sessions WHERE sealed_at IS NOT NULL)::int AS sealed, (SELECT count(*) FROM tombstones)::int AS tombstones,
      (SELECT count(*) FROM compactions)::int AS compactions, (SELECT count(*) FROM executions WHERE input_tokens IS NOT NULL)::int AS usage, (SELECT count(*) FROM model_calls)::int AS model_calls,
      (SELECT count(*) FROM review_comments WHERE answered_by_execution_id IS NOT NULL)::int AS answered,
      (SELECT count(*) FROM review_comments WHERE state = 'RESOLVED')::int AS resolved`;
    expect(Object.values(seen).every((n) => Number(n) > 0), JSON.stringify(seen)).toBe(true);
  }, 180_000); // three long random histories and their replays: ~30 s alone, more on a loaded machine

  it('rebuilds the live tables in place from the journal, identical afterwards', async () => {
    const before = await projections();
    expect(before.messages.length).toBeGreaterThan(0);
    // Already in agreement: nothing to change (rows other tables reference are left alone).
    expect((await rebuildProjections(g.sql)).changed).toEqual({ deleted: 0, updated: 0, inserted: 0 });
    expect(await projections()).toEqual(before);
    // Damage the live tables: the rebuild must restore them from the journal alone.
    await g.sql`UPDATE parts SET text = 'tampered' WHERE type = 'TEXT'`;
    await g.sql`DELETE FROM messages WHERE id = (SELECT min(id) FROM messages WHERE id NOT IN (SELECT summary_message_id FROM compactions))`;
    await g.sql`UPDATE executions SET status = 'FAILED', input_tokens = 1 WHERE id = (SELECT min(id) FROM executions)`;
    await g.sql`UPDATE sessions SET title = 'tampered', sealed_at = NULL`;
    await g.sql`DELETE FROM jobs WHERE id = (SELECT min(id) FROM jobs)`;
    expect(before.review_comments.length).toBeGreaterThan(0);
    await g.sql`UPDATE review_comments SET body = 'tampered', state = 'OPEN', resolved_at = NULL, answered_by_execution_id = NULL`;
    await g.sql`DELETE FROM review_comments WHERE id = (SELECT min(id) FROM review_comments)`;
    await replayIntoSchema(g.sql, 'replay_check');
    const diffs = await compareProjections(g.sql, 'replay_check', { limit: 1000 });
    expect(new Set(diffs.map((d) => d.table))).toEqual(new Set(['sessions', 'executions', 'jobs', 'messages', 'parts', 'review_comments']));
    expect(diffs.some((d) => d.table === 'messages' && d.live === null && d.replayed !== null)).toBe(true);
    await g.sql`INSERT INTO messages (id, session_id, position, role, origin)
      SELECT 'msg_0000000000000000000000xx', session_id, 1000000, 'USER', 'PROMPT' FROM messages LIMIT 1`;
    const stats = await rebuildProjections(g.sql);
    expect(stats.rows.messages).toBe(before.messages.length);
    expect(stats.changed.deleted).toBe(1);
    expect(stats.changed.inserted).toBeGreaterThan(0);
    expect(stats.changed.updated).toBeGreaterThan(0);
    expect(await projections()).toEqual(before);
    expect(await g.sql`SELECT 1 FROM pg_namespace WHERE nspname LIKE 'gateway_rebuild_%'`).toHaveLength(0);
  });

  it('checks every payload when it is written: a malformed event is refused and nothing is written', async () => {
    const s = await createSession(g.sql, SYSTEM, { directory: '/w' });
    const before = await g.sql`SELECT last_seq FROM sessions WHERE id = ${s.id}`;
    await expect(g.sql.begin(async (tx) => commitEvent(await lockSession(tx, SYSTEM, s.id), 'job.finished', { jobID: 'not-a-job', status: 'COMPLETED', exitCode: null })))
      .rejects.toThrow(PayloadError);
    await expect(g.sql.begin(async (tx) => commitEvent(await lockSession(tx, SYSTEM, s.id), 'session.updated', { title: null, metadata: null, extra: 1 } as never)))
      .rejects.toThrow(/extra: is not a field/);
    expect(await g.sql`SELECT last_seq FROM sessions WHERE id = ${s.id}`).toEqual(before);
    expect(await g.sql`SELECT seq FROM journal WHERE session_id = ${s.id}`).toHaveLength(1);
  });

  it('reads execution.settled v2 in the one meaning of usage, by the agent of its host, as migration 066 brings the rows', async () => {
    // What each agent's host reported before v3 for the same model calls (input 1000 of which 600 read from the
    // cache and 100 written; output 50 of which 20 reasoning), and the one meaning every v3 event carries.
    const v3 = { inputTokens: 1000, outputTokens: 50, reasoningTokens: 20, cacheReadTokens: 600, cacheWriteTokens: 100, cacheWrite5mTokens: null, cacheWrite1hTokens: null, cost: null };
    const before: Record<string, typeof v3> = {
      'claude-code': { ...v3, inputTokens: 300 }, // Anthropic's input_tokens: without the cached ones
      opencode: { ...v3, inputTokens: 300, outputTokens: 30 }, // OpenCode's tokens: without the cached input and the reasoning output
      codex: v3, // OpenAI's: as v3 counts
      'reference-host': v3,
    };
    const executions: Record<string, string> = {};
    const sessions: string[] = [];
    for (const kind of Object.keys(before)) {
      const h = await registerHost(g.sql, SYSTEM, { name: `${kind} host /w`, leaseMs: 600_000, capabilities: {} });
      const s = await createSession(g.sql, SYSTEM, { title: kind, directory: '/w' });
      const e = await beginExecution(g.sql, SYSTEM, { sessionID: s.id, hostID: h.id, trigger: 'PROMPT' });
      await settleExecution(g.sql, SYSTEM, { executionID: e.id, status: 'SUCCEEDED', usage: v3 });
      executions[kind] = e.id;
      sessions.push(s.id);
      // As a gateway before v3 stored it: the event at version 2 with the host's counts, and the row with them.
      const { cacheWrite5mTokens: _5m, cacheWrite1hTokens: _1h, ...old } = before[kind];
      await g.sql`UPDATE journal SET version = 2, payload = jsonb_set(payload, '{usage}', ${g.sql.json(old)})
        WHERE session_id = ${s.id} AND type = 'execution.settled'`;
      await g.sql`UPDATE executions SET input_tokens = ${old.inputTokens}, output_tokens = ${old.outputTokens} WHERE id = ${e.id}`;
    }
    const rows = async () => Object.fromEntries(await Promise.all(Object.entries(executions).map(async ([kind, id]) => {
      const [r] = await g.sql`SELECT input_tokens::int AS i, output_tokens::int AS o, reasoning_tokens::int AS r, cache_read_tokens::int AS cr, cache_write_tokens::int AS cw FROM executions WHERE id = ${id}`;
      return [kind, r];
    })));
    expect((await rows())['claude-code']).toEqual({ i: 300, o: 50, r: 20, cr: 600, cw: 100 });
    // As migrate() applies it (statement by statement on a Citus coordinator, whose tables are distributed here).
    await g.sql.begin((tx) => applyMigration(tx, migrationFiles().find((m) => m.version === 66)!.sql));
    const one = { i: 1000, o: 50, r: 20, cr: 600, cw: 100 };
    expect(await rows()).toEqual({ 'claude-code': one, opencode: one, codex: one, 'reference-host': one });
    try {
      const stats = await replayIntoSchema(g.sql, 'replay_v2');
      expect(sessions.filter((sid) => stats.inexact.has(sid))).toEqual([]); // exact: the host says how it counted
      const diffs = await compareProjections(g.sql, 'replay_v2', { limit: 1000 });
      expect(diffs.filter((d) => Object.values(executions).some((id) => d.key.includes(id)))).toEqual([]);
      const replayed = await g.sql`SELECT input_tokens::int AS i, output_tokens::int AS o FROM replay_v2.executions WHERE id IN ${g.sql(Object.values(executions))}`;
      expect(replayed).toEqual(Object.values(executions).map(() => ({ i: 1000, o: 50 })));
    } finally {
      await g.sql`DROP SCHEMA IF EXISTS replay_v2 CASCADE`;
    }
  });

  it('reads older event versions, says which rows they cannot rebuild exactly, and refuses gaps and unknown versions', async () => {
    const sid = 'ses_000000000000000000000000v1';
    const ev = (seq: number, type: string, version: number, payload: unknown) => g.sql`
      INSERT INTO journal (session_id, seq, type, version, payload) VALUES (${sid}, ${seq}, ${type}, ${version}, ${g.sql.json(payload as never)})`;
    const replay = () => replayIntoSchema(g.sql, 'replay_old');
    try {
      await ev(1, 'session.created', 1, { parentID: null, title: 'old', directory: '/w', metadata: {} });
      await ev(2, 'execution.started', 1, { executionID: 'exe_00000000000000000000000001', sequence: 1, hostID, trigger: 'PROMPT', startSnapshotID: null });
      await ev(3, 'session.sealing', 1, { at: '2026-01-01T00:00:00.000Z' });
      const s = await replay();
      expect(s.inexact.get(sid)).toEqual(new Set(['executions', 'sessions']));
      const [e] = await g.sql`SELECT status, external_id, sequence FROM replay_old.executions WHERE session_id = ${sid}`;
      expect(e).toEqual({ status: 'RUNNING', externalId: null, sequence: 1 });
      const [r] = await g.sql`SELECT last_seq, seal_requested_at IS NOT NULL AS sealing FROM replay_old.sessions WHERE id = ${sid}`;
      expect(r).toEqual({ lastSeq: 3, sealing: true });
      await ev(5, 'session.updated', 1, { title: 'x', metadata: null });
      await expect(replay()).rejects.toThrow(/has a gap: seq 5 after 3/);
      await g.sql`DELETE FROM journal WHERE session_id = ${sid} AND seq = 5`;
      await ev(4, 'message.retracted', 2, { messageID: 'msg_a' });
      await expect(replay()).rejects.toThrow(ReplayError);
      await g.sql`DELETE FROM journal WHERE session_id = ${sid} AND seq = 4`;
      await ev(4, 'session.updated', 1, { title: 42, metadata: null });
      await expect(replay()).rejects.toThrow(/session.updated.title: expected a string/);
    } finally {
      await g.sql`DELETE FROM journal WHERE session_id = ${sid}`;
      await g.sql`DROP SCHEMA IF EXISTS replay_old CASCADE`;
    }
  });
});
