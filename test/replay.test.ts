import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { SYSTEM } from '../domain/access.js';
import { correctMessagePart, retractMessage } from '../domain/corrections.js';
import { GatewayError } from '../domain/errors.js';
import { beginExecution, settleExecution } from '../domain/executions.js';
import { registerHost } from '../domain/hosts.js';
import { appendMessage, type PartInput } from '../domain/messages.js';
import { compareProjections, rebuildProjections, ReplayError, replayIntoSchema, SessionProjection } from '../domain/replay.js';
import { createSession, removeSession, updateSession } from '../domain/sessions.js';
import type { Origin } from '../domain/rows.js';

let g: TestGateway;
let hostID: string;
beforeAll(async () => {
  g = await startTestGateway();
  hostID = (await registerHost(g.sql, SYSTEM, { name: 'replay-host', leaseMs: 600_000 })).id;
});
afterAll(async () => { await g?.stop(); });

/** Both projections, every column, exactly (timestamps with microseconds, jsonb by value). */
async function projections() {
  const [r] = await g.sql`SELECT
    (SELECT coalesce(jsonb_agg(to_jsonb(m) ORDER BY m.id), '[]') FROM messages m) AS messages,
    (SELECT coalesce(jsonb_agg(to_jsonb(p) ORDER BY p.id), '[]') FROM parts p) AS parts`;
  return r;
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
  { weight: 2, arbitrary: fc.record({ k: fc.constant('session' as const), parent: fc.option(pick, { nil: null }) }) },
  {
    weight: 6,
    arbitrary: fc.record({
      k: fc.constant('append' as const), s: pick, parts: fc.array(part, { minLength: 1, maxLength: 4 }),
      origin: fc.constantFrom<Origin>('PROMPT', 'SYNTHETIC', 'MODEL', 'HOST'), inExecution: fc.boolean(),
    }),
  },
  { weight: 5, arbitrary: fc.record({ k: fc.constant('correct' as const), m: pick, p: pick, text }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('retract' as const), m: pick, reason: fc.option(text, { nil: null }) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('begin' as const), s: pick }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('settle' as const), s: pick }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('update' as const), s: pick, title: text }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('remove' as const), s: pick }) },
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

/** Runs a random history through the live write path (the domain functions the resolvers call). */
async function run(ops: Op[]) {
  const sessions: string[] = [];
  const running = new Map<string, string>();
  const at = <T>(xs: T[], i: number) => (xs.length ? xs[i % xs.length] : undefined);
  for (const o of ops) {
    try {
      switch (o.k) {
        case 'session': {
          const parentID = o.parent === null ? null : at(sessions, o.parent) ?? null;
          sessions.push((await createSession(g.sql, SYSTEM, { parentID, directory: parentID ? null : '/w', title: 't' })).id);
          break;
        }
        case 'append': {
          const sessionID = at(sessions, o.s);
          if (!sessionID) break;
          const executionID = o.inExecution ? running.get(sessionID) ?? null : null;
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
          const e = await beginExecution(g.sql, SYSTEM, { sessionID, hostID, trigger: 'PROMPT' });
          running.set(sessionID, e.id);
          break;
        }
        case 'settle': {
          const sessionID = at(sessions, o.s);
          const exe = sessionID && running.get(sessionID);
          if (!exe) break;
          running.delete(sessionID);
          await settleExecution(g.sql, SYSTEM, { executionID: exe, status: 'SUCCEEDED' });
          break;
        }
        case 'update': {
          const sessionID = at(sessions, o.s);
          if (sessionID) await updateSession(g.sql, SYSTEM, { sessionID, title: o.title });
          break;
        }
        case 'remove': {
          const sessionID = at(sessions, o.s);
          if (!sessionID) break;
          const r = await removeSession(g.sql, SYSTEM, { sessionID });
          for (const id of r.removedSessionIDs) { sessions.splice(sessions.indexOf(id), 1); running.delete(id); }
          break;
        }
      }
    } catch (e) {
      // Expected refusals (busy, invalid text, retracted, not a text part...) commit nothing; anything else is a bug.
      if (!(e instanceof GatewayError)) throw e;
    }
  }
  for (const exe of running.values()) await settleExecution(g.sql, SYSTEM, { executionID: exe, status: 'SUCCEEDED' });
}

describe('replay', () => {
  it('rebuilds exactly the live projections after long random histories of appends, corrections, retractions and removals', async () => {
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 70, maxLength: 130 }), async (ops) => {
        await run([{ k: 'session', parent: null }, ...ops]);
        const s = await replayIntoSchema(g.sql, 'replay_check');
        const diffs = await compareProjections(g.sql, 'replay_check');
        expect(diffs).toEqual([]);
        const [counts] = await g.sql`SELECT (SELECT count(*) FROM messages)::int AS m, (SELECT count(*) FROM replay_check.messages)::int AS r`;
        expect(counts.r).toBe(counts.m);
        expect(s.messages).toBe(counts.m);
        checked++;
      }),
      { numRuns: 3, endOnFailure: true },
    );
    expect(checked).toBe(3);
    // The history really did exercise every kind of event.
    const kinds = await g.sql`SELECT type, count(*)::int AS n FROM journal GROUP BY type`;
    const by = Object.fromEntries(kinds.map((k) => [k.type, k.n]));
    for (const t of ['message.appended', 'message.part_corrected', 'message.retracted', 'session.removed', 'execution.started']) {
      expect(by[t], t).toBeGreaterThan(0);
    }
    const [retracted] = await g.sql`SELECT count(*)::int AS n FROM messages WHERE retracted_at IS NOT NULL`;
    expect(retracted.n).toBeGreaterThan(0);
  });

  it('rebuilds the live tables in place from the journal, identical afterwards', async () => {
    const before = await projections();
    expect(before.messages.length).toBeGreaterThan(0);
    // Already in agreement: nothing to change (rows other tables reference are left alone).
    expect((await rebuildProjections(g.sql)).changed).toEqual({ deleted: 0, updated: 0, inserted: 0 });
    expect(await projections()).toEqual(before);
    // Damage the live projection: the rebuild must restore it from the journal alone.
    await g.sql`UPDATE parts SET text = 'tampered' WHERE type = 'TEXT'`;
    await g.sql`DELETE FROM messages WHERE id = (SELECT min(id) FROM messages)`;
    await replayIntoSchema(g.sql, 'replay_check');
    const diffs = await compareProjections(g.sql, 'replay_check', 1000);
    expect(diffs.length).toBeGreaterThan(1);
    expect(diffs.some((d) => d.table === 'messages' && d.live === null && d.replayed !== null)).toBe(true);
    await g.sql`INSERT INTO messages (id, session_id, position, role, origin)
      SELECT 'msg_0000000000000000000000xx', session_id, 1000000, 'USER', 'PROMPT' FROM messages LIMIT 1`;
    const stats = await rebuildProjections(g.sql);
    expect(stats.messages).toBe(before.messages.length);
    expect(stats.changed.deleted).toBe(1);
    expect(stats.changed.inserted).toBeGreaterThan(0);
    expect(stats.changed.updated).toBeGreaterThan(0);
    expect(await projections()).toEqual(before);
  });

  it('refuses a journal with a gap or an unknown event version rather than guessing', () => {
    const p = new SessionProjection('ses_x');
    const ev = (seq: number, type: string, version = 1, payload: any = {}) => ({ sessionId: 'ses_x', seq, type, version, payload, at: '2026-01-01 00:00:00+00' });
    p.apply(ev(1, 'session.created'));
    expect(() => p.apply(ev(3, 'session.updated'))).toThrow(ReplayError);
    const q = new SessionProjection('ses_y');
    q.apply(ev(1, 'session.created'));
    expect(() => q.apply(ev(2, 'message.retracted', 2, { messageID: 'msg_a' }))).toThrow(ReplayError);
  });
});
