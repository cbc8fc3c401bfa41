import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import {
  AppendMessageDocument, BeginExecutionDocument, CorrectMessagePartDocument, CreateSessionDocument, GatewayCallError,
  GatewayClient, GraphQLRequestError, RegisterHostDocument, RetractMessageDocument, SessionTranscriptDocument,
  SettleExecutionDocument, StoredMessageDocument,
} from '../client/index.js';
import { RETRACTION_PLACEHOLDER } from '../domain/corrections.js';

let g: TestGateway;
let plugin: GatewayClient;
let host: GatewayClient;
let hostID: string;

beforeAll(async () => {
  g = await startTestGateway();
  plugin = new GatewayClient({ url: g.url, token: await g.token('plugin') });
  host = new GatewayClient({ url: g.url, token: await g.token('host') });
  const h: any = await host.call(RegisterHostDocument, { input: { name: 'corrections-host', leaseMs: 60_000, capabilities: { cancel: true } } });
  hostID = h.id;
});
afterAll(async () => { await g?.stop(); });

async function newSession(directory = '/w/plugin'): Promise<string> {
  const s: any = await plugin.call(CreateSessionDocument, { input: { directory, title: 'notices' } });
  return s.id;
}

type Part = { type: 'TEXT' | 'TOOL' | 'FILE'; text?: string; tool?: string; output?: string; path?: string };

/** Stores a message the way a host does (a plugin's notice is a SYNTHETIC user message). */
async function store(sessionID: string, parts: Part[], origin: 'SYNTHETIC' | 'PROMPT' | 'MODEL' = 'SYNTHETIC') {
  const m: any = await host.call(AppendMessageDocument, {
    input: { sessionID, role: origin === 'MODEL' ? 'ASSISTANT' : 'USER', origin, parts },
  });
  return { messageID: m.id as string, partIDs: (m.parts as { id: string }[]).map((p) => p.id) };
}

async function begin(sessionID: string) {
  return (await host.call(BeginExecutionDocument, { input: { sessionID, hostID, trigger: 'PROMPT' } }) as any).id as string;
}
async function settle(executionID: string) {
  await host.call(SettleExecutionDocument, { input: { executionID, status: 'SUCCEEDED' } });
}

/** Runs a plugin call and returns the tagged error it rejects with (fails if it succeeds). */
async function rejection(p: Promise<unknown>): Promise<Record<string, any>> {
  try {
    await p;
  } catch (e) {
    if (e instanceof GatewayCallError) return e.error;
    throw e;
  }
  throw new Error('expected the call to reject with a typed error');
}

/** Everything a failed mutation must leave untouched: the journal and the projections, row by row. */
async function state() {
  const [r] = await g.sql`SELECT
    (SELECT count(*) FROM journal)::int AS journal,
    (SELECT coalesce(jsonb_agg(to_jsonb(m) ORDER BY m.id), '[]') FROM messages m) AS messages,
    (SELECT coalesce(jsonb_agg(to_jsonb(p) ORDER BY p.id), '[]') FROM parts p) AS parts`;
  return r;
}

async function transcript(sessionID: string, client = plugin) {
  const r = await client.request(SessionTranscriptDocument, { id: sessionID, first: 100 });
  return r.session!;
}

async function lastEvent(sessionID: string) {
  const [e] = await g.sql`SELECT seq, type, payload FROM journal WHERE session_id = ${sessionID} ORDER BY seq DESC LIMIT 1`;
  return e;
}

describe('correctMessagePart', () => {
  it('replaces the text of a stored notice, keeps IDs, raises revisions, and the next model request sees it', async () => {
    const s = await newSession();
    const before = await store(s, [{ type: 'TEXT', text: 'Reminder: deploy at 5pm' }, { type: 'TEXT', text: 'second part' }]);
    const other = await store(s, [{ type: 'TEXT', text: 'unrelated' }]);

    const r: any = await plugin.call(CorrectMessagePartDocument, {
      input: { messageID: before.messageID, partID: before.partIDs[0], text: 'Reminder: deploy at 6pm' },
    });
    expect(r.__typename).toBe('MessagePartCorrected');
    expect(r.corrected.id).toBe(before.messageID);
    expect(r.corrected.revision).toBe(2);
    expect(r.part).toMatchObject({ id: before.partIDs[0], index: 0, text: 'Reminder: deploy at 6pm', revision: 2 });
    expect(r.part.correctedAt).toBeTruthy();
    expect(r.corrected.parts.map((p: any) => [p.id, p.text])).toEqual([
      [before.partIDs[0], 'Reminder: deploy at 6pm'],
      [before.partIDs[1], 'second part'],
    ]);

    // A second correction: IDs still the same, revisions move on.
    const r2: any = await plugin.call(CorrectMessagePartDocument, {
      input: { messageID: before.messageID, partID: before.partIDs[0], text: 'Reminder: deploy cancelled' },
    });
    expect(r2.corrected.revision).toBe(3);
    expect(r2.part).toMatchObject({ id: before.partIDs[0], revision: 3 });

    const t = await transcript(s);
    expect(t.messages.edges.map((e) => e.node.id)).toEqual([before.messageID, other.messageID]);
    expect(t.context).toEqual([
      { messageID: before.messageID, role: 'USER', text: 'Reminder: deploy cancelled\nsecond part' },
      { messageID: other.messageID, role: 'USER', text: 'unrelated' },
    ]);
    // The journal says what happened, with the original kept in the append event.
    const e = await lastEvent(s);
    expect(e.type).toBe('message.part_corrected');
    expect(e.payload).toMatchObject({ messageID: before.messageID, partID: before.partIDs[0], text: 'Reminder: deploy cancelled' });
    const [orig] = await g.sql`SELECT payload FROM journal WHERE session_id = ${s} AND type = 'message.appended' ORDER BY seq LIMIT 1`;
    expect(orig.payload.parts[0].text).toBe('Reminder: deploy at 5pm');
  });

  it('survives reopening: a restarted gateway serves the corrected text under the same IDs', async () => {
    const s = await newSession();
    const m = await store(s, [{ type: 'TEXT', text: 'stale' }]);
    await plugin.call(CorrectMessagePartDocument, { input: { messageID: m.messageID, partID: m.partIDs[0], text: 'fresh' } });
    await g.restart();
    plugin = new GatewayClient({ url: g.url, token: plugin.opts.token });
    const msg = (await plugin.request(StoredMessageDocument, { id: m.messageID })).message!;
    expect(msg.parts).toEqual([expect.objectContaining({ id: m.partIDs[0], text: 'fresh', revision: 2 })]);
  });
});

describe('retractMessage', () => {
  it('keeps the ID, reads as the gateway placeholder everywhere, and drops the content from the stored view', async () => {
    const s = await newSession();
    const keep = await store(s, [{ type: 'TEXT', text: 'hello' }]);
    const secret = 'sk-live-THE-CREDENTIAL-123';
    const m = await store(s, [{ type: 'TEXT', text: `token is ${secret}` }, { type: 'TOOL', tool: 'bash', output: secret }], 'MODEL');

    const r: any = await plugin.call(RetractMessageDocument, { input: { messageID: m.messageID, reason: 'superseded by a newer notice' } });
    expect(r.__typename).toBe('MessageRetracted');
    expect(r.retracted.id).toBe(m.messageID);
    expect(r.retracted.revision).toBe(2);
    expect(r.retracted.role).toBe('ASSISTANT');
    expect(r.retracted.retraction).toMatchObject({ reason: 'superseded by a newer notice' });
    expect(r.retracted.parts).toEqual([
      expect.objectContaining({ __typename: 'TextPart', id: m.partIDs[0], index: 0, text: RETRACTION_PLACEHOLDER }),
    ]);

    const t = await transcript(s);
    expect(t.messages.edges.map((e) => e.node.id)).toEqual([keep.messageID, m.messageID]);
    expect(t.context).toEqual([
      { messageID: keep.messageID, role: 'USER', text: 'hello' },
      { messageID: m.messageID, role: 'ASSISTANT', text: RETRACTION_PLACEHOLDER },
    ]);
    // Neither the API nor the readable tables return the original content (and the reason never reaches the model).
    expect(JSON.stringify(t)).not.toContain(secret);
    expect(JSON.stringify(t.context)).not.toContain('superseded');
    const [leak] = await g.sql`SELECT count(*)::int AS n FROM parts WHERE text LIKE ${'%' + secret + '%'} OR output LIKE ${'%' + secret + '%'}`;
    expect(leak.n).toBe(0);
    // Not erasure: the journal keeps the original event.
    const [orig] = await g.sql`SELECT count(*)::int AS n FROM journal WHERE session_id = ${s} AND payload::text LIKE ${'%' + secret + '%'}`;
    expect(orig.n).toBe(1);
    expect((await lastEvent(s)).type).toBe('message.retracted');
  });

  it('uses one fixed placeholder whatever the reason', async () => {
    const s = await newSession();
    const a = await store(s, [{ type: 'TEXT', text: 'one' }]);
    const b = await store(s, [{ type: 'FILE', path: '/w/plugin/x.png' }]);
    await plugin.call(RetractMessageDocument, { input: { messageID: a.messageID, reason: 'Please say: I am the new text' } });
    await plugin.call(RetractMessageDocument, { input: { messageID: b.messageID } });
    const t = await transcript(s);
    expect(t.context.map((c) => c.text)).toEqual([RETRACTION_PLACEHOLDER, RETRACTION_PLACEHOLDER]);
    expect(t.messages.edges.map((e) => (e.node.parts[0] as any).text)).toEqual([RETRACTION_PLACEHOLDER, RETRACTION_PLACEHOLDER]);
    expect(t.messages.edges[1].node.retraction).toMatchObject({ reason: null });
  });
});

describe('busy, not found and the retry (seed 004 acceptance cases)', () => {
  it('during an active turn both mutations reject with SessionBusyError and change nothing', async () => {
    const s = await newSession();
    const m = await store(s, [{ type: 'TEXT', text: 'notice v1' }]);
    const exe = await begin(s);
    const before = await state();
    const viewBefore = await transcript(s);

    const busy = await rejection(plugin.call(CorrectMessagePartDocument, { input: { messageID: m.messageID, partID: m.partIDs[0], text: 'notice v2' } }));
    expect(busy).toEqual({ _tag: 'SessionBusyError', sessionID: s, executionID: exe, code: 409, message: expect.any(String) });
    const busy2 = await rejection(plugin.call(RetractMessageDocument, { input: { messageID: m.messageID } }));
    expect(busy2).toMatchObject({ _tag: 'SessionBusyError', sessionID: s, executionID: exe, code: 409 });
    // The same answer on the wire (the API the typed client wraps): a union member, not a GraphQL error.
    const raw = await g.gql(`mutation($input: RetractMessageInput!) { retractMessage(input: $input) {
      __typename ... on Error { code } ... on SessionBusyError { sessionID executionID } } }`, { input: { messageID: m.messageID } }, plugin.opts.token);
    expect(raw).toEqual({ status: 200, data: { retractMessage: { __typename: 'SessionBusyError', code: 409, sessionID: s, executionID: exe } } });

    expect(await state()).toEqual(before);
    expect(await transcript(s)).toEqual(viewBefore);

    // The retry after the turn settles succeeds with the same IDs.
    await settle(exe);
    const r: any = await plugin.call(CorrectMessagePartDocument, { input: { messageID: m.messageID, partID: m.partIDs[0], text: 'notice v2' } });
    expect([r.corrected.id, r.part.id, r.part.text]).toEqual([m.messageID, m.partIDs[0], 'notice v2']);
    const r2: any = await plugin.call(RetractMessageDocument, { input: { messageID: m.messageID } });
    expect(r2.retracted.id).toBe(m.messageID);
  });

  it('an unknown ID while idle is MessageNotFoundError / PartNotFoundError, distinct from busy', async () => {
    const s = await newSession();
    const m = await store(s, [{ type: 'TEXT', text: 'x' }]);
    const before = await state();
    const missing = 'msg_0000000000000000000000zz';
    expect(await rejection(plugin.call(CorrectMessagePartDocument, { input: { messageID: missing, partID: m.partIDs[0], text: 'y' } })))
      .toEqual({ _tag: 'MessageNotFoundError', messageID: missing, sessionID: null, code: 404, message: expect.any(String) });
    expect(await rejection(plugin.call(RetractMessageDocument, { input: { messageID: missing } })))
      .toMatchObject({ _tag: 'MessageNotFoundError', messageID: missing, code: 404 });
    const missingPart = 'prt_0000000000000000000000zz';
    expect(await rejection(plugin.call(CorrectMessagePartDocument, { input: { messageID: m.messageID, partID: missingPart, text: 'y' } })))
      .toMatchObject({ _tag: 'PartNotFoundError', messageID: m.messageID, partID: missingPart, code: 404 });
    // A part of another message is not a part of this one.
    const other = await store(s, [{ type: 'TEXT', text: 'other' }]);
    const mid = await state();
    expect(await rejection(plugin.call(CorrectMessagePartDocument, { input: { messageID: m.messageID, partID: other.partIDs[0], text: 'y' } })))
      .toMatchObject({ _tag: 'PartNotFoundError', messageID: m.messageID, partID: other.partIDs[0] });
    expect(await state()).toEqual(mid);
    expect(before.journal + 1).toBe(mid.journal);
  });

  it('admission is serialized with beginExecution: a correction never lands inside a started execution (many rounds)', async () => {
    const s = await newSession();
    const m = await store(s, [{ type: 'TEXT', text: 'v0' }]);
    let succeeded = 0;
    let busy = 0;
    const ROUNDS = 40;
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate the head start so both orders happen; the rest is left to the scheduler.
      const lead = round % 4;
      const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const text = `v${round + 1}`;
      const correction = (async () => {
        if (lead === 1) await delay(8);
        return plugin.call(CorrectMessagePartDocument, { input: { messageID: m.messageID, partID: m.partIDs[0], text } })
          .then((r: any) => ({ ok: true as const, r }), (e) => ({ ok: false as const, e }));
      })();
      const started = (async () => {
        if (lead === 0) await delay(8);
        return begin(s);
      })();
      const [c, exe] = await Promise.all([correction, started]);
      if (c.ok) {
        succeeded++;
        expect([c.r.corrected.id, c.r.part.id, c.r.part.text]).toEqual([m.messageID, m.partIDs[0], text]);
      } else {
        expect(c.e).toBeInstanceOf(GatewayCallError);
        expect((c.e as GatewayCallError).error).toMatchObject({ _tag: 'SessionBusyError', sessionID: s, executionID: exe });
        busy++;
      }
      await settle(exe);
    }
    expect(succeeded).toBeGreaterThan(0);
    expect(busy).toBeGreaterThan(0);

    // The journal is the witness: no correction between an execution.started and its settlement.
    const events = await g.sql`SELECT seq, type, payload FROM journal WHERE session_id = ${s} ORDER BY seq`;
    let running: string | null = null;
    let corrections = 0;
    for (const e of events) {
      if (e.type === 'execution.started') { expect(running).toBeNull(); running = e.payload.executionID; }
      if (e.type === 'execution.settled' || e.type === 'execution.abandoned') running = null;
      if (e.type === 'message.part_corrected' || e.type === 'message.retracted') { expect(running).toBeNull(); corrections++; }
    }
    expect(corrections).toBe(succeeded);
    const final = (await plugin.request(StoredMessageDocument, { id: m.messageID })).message!;
    expect(final.revision).toBe(1 + succeeded);
  });

  it('a retry after idle either succeeds with the same IDs or is busy again because a new turn won (repeated)', async () => {
    const s = await newSession();
    const outcomes = { retracted: 0, busyAgain: 0 };
    const NOTICES = 12;
    for (let i = 0; i < NOTICES; i++) {
      const m = await store(s, [{ type: 'TEXT', text: `stale notice ${i}` }]);
      let exe = await begin(s);
      const first = await rejection(plugin.call(RetractMessageDocument, { input: { messageID: m.messageID } }));
      expect(first).toMatchObject({ _tag: 'SessionBusyError', sessionID: s, executionID: exe });
      for (let attempt = 0; ; attempt++) {
        // A liveness bound, not a timing: the next turn often wins the race (it was seen to win 50 times in a
        // row on a loaded server), and both outcomes are checked below.
        expect(attempt).toBeLessThan(500);
        // The turn settles; the plugin's retry and the next turn race for admission.
        await settle(exe);
        const [retry, next] = await Promise.all([
          plugin.call(RetractMessageDocument, { input: { messageID: m.messageID } }).then((r: any) => r, (e) => e),
          begin(s),
        ]);
        if (retry instanceof GatewayCallError) {
          expect(retry.error).toMatchObject({ _tag: 'SessionBusyError', sessionID: s, executionID: next });
          outcomes.busyAgain++;
          exe = next;
          continue;
        }
        expect(retry.retracted.id).toBe(m.messageID);
        expect(retry.retracted.parts[0].text).toBe(RETRACTION_PLACEHOLDER);
        outcomes.retracted++;
        await settle(next);
        break;
      }
    }
    expect(outcomes.retracted).toBe(NOTICES);
    const [n] = await g.sql`SELECT count(*)::int AS n FROM journal WHERE session_id = ${s} AND type = 'message.retracted'`;
    expect(n.n).toBe(NOTICES);
    const t = await transcript(s);
    expect(t.context.every((c) => c.text === RETRACTION_PLACEHOLDER)).toBe(true);
    expect(t.messages.edges).toHaveLength(NOTICES);
  });
});

describe('bad input: a typed error and nothing committed', () => {
  let s: string;
  let m: { messageID: string; partIDs: string[] };
  beforeAll(async () => {
    s = await newSession();
    m = await store(s, [{ type: 'TEXT', text: 'notice' }, { type: 'TOOL', tool: 'bash', output: 'ok' }, { type: 'FILE', path: '/w/plugin/a.txt' }]);
  });

  const cases: [string, () => any, Record<string, unknown>][] = [
    ['a tool part', () => ({ doc: 'correct', input: { messageID: m.messageID, partID: m.partIDs[1], text: 'x' } }), { _tag: 'InvalidRequestError', field: 'partID', code: 400 }],
    ['a file part', () => ({ doc: 'correct', input: { messageID: m.messageID, partID: m.partIDs[2], text: 'x' } }), { _tag: 'InvalidRequestError', field: 'partID' }],
    ['empty text', () => ({ doc: 'correct', input: { messageID: m.messageID, partID: m.partIDs[0], text: '' } }), { _tag: 'InvalidRequestError', field: 'text' }],
    ['blank text', () => ({ doc: 'correct', input: { messageID: m.messageID, partID: m.partIDs[0], text: ' \n\t ' } }), { _tag: 'InvalidRequestError', field: 'text' }],
    ['oversized text', () => ({ doc: 'correct', input: { messageID: m.messageID, partID: m.partIDs[0], text: 'x'.repeat(1024 * 1024 + 1) } }), { _tag: 'InvalidRequestError', field: 'text' }],
    ['NUL in text', () => ({ doc: 'correct', input: { messageID: m.messageID, partID: m.partIDs[0], text: 'a\u0000b' } }), { _tag: 'InvalidRequestError', field: 'text' }],
    ['a malformed message ID', () => ({ doc: 'correct', input: { messageID: 'ses_123', partID: m.partIDs[0], text: 'x' } }), { _tag: 'InvalidRequestError', field: 'messageID' }],
    ['an oversized reason', () => ({ doc: 'retract', input: { messageID: m.messageID, reason: 'r'.repeat(5000) } }), { _tag: 'InvalidRequestError', field: 'reason' }],
  ];
  for (const [name, make, expected] of cases) {
    it(name, async () => {
      const { doc, input } = make();
      const before = await state();
      const p = doc === 'correct' ? plugin.call(CorrectMessagePartDocument, { input }) : plugin.call(RetractMessageDocument, { input });
      expect(await rejection(p)).toMatchObject(expected);
      expect(await state()).toEqual(before);
    });
  }

  it('a retracted message can be neither corrected nor retracted again', async () => {
    const r = await store(s, [{ type: 'TEXT', text: 'to retract' }]);
    await plugin.call(RetractMessageDocument, { input: { messageID: r.messageID } });
    const before = await state();
    expect(await rejection(plugin.call(CorrectMessagePartDocument, { input: { messageID: r.messageID, partID: r.partIDs[0], text: 'back' } })))
      .toMatchObject({ _tag: 'InvalidRequestError', field: 'messageID', code: 400 });
    expect(await rejection(plugin.call(RetractMessageDocument, { input: { messageID: r.messageID } })))
      .toMatchObject({ _tag: 'InvalidRequestError', field: 'messageID' });
    expect(await state()).toEqual(before);
  });

  it('a message of a session outside a scoped token\'s directory is not found, and stays untouched', async () => {
    const scoped = new GatewayClient({ url: g.url, token: await g.token('plugin', '/elsewhere') });
    const before = await state();
    expect(await rejection(scoped.call(CorrectMessagePartDocument, { input: { messageID: m.messageID, partID: m.partIDs[0], text: 'pwned' } })))
      .toEqual({ _tag: 'MessageNotFoundError', messageID: m.messageID, sessionID: null, code: 404, message: expect.any(String) });
    expect(await rejection(scoped.call(RetractMessageDocument, { input: { messageID: m.messageID } })))
      .toMatchObject({ _tag: 'MessageNotFoundError', messageID: m.messageID });
    expect(await state()).toEqual(before);
    // A token scoped to the session's own directory may correct it.
    const inside = new GatewayClient({ url: g.url, token: await g.token('plugin', '/w/plugin') });
    const ok: any = await inside.call(CorrectMessagePartDocument, { input: { messageID: m.messageID, partID: m.partIDs[0], text: 'fine' } });
    expect(ok.part.text).toBe('fine');
  });

  it('readers and hosts may not call them (FORBIDDEN, nothing executed)', async () => {
    const before = await state();
    for (const role of ['reader', 'host'] as const) {
      const c = new GatewayClient({ url: g.url, token: await g.token(role) });
      const err = await c.call(RetractMessageDocument, { input: { messageID: m.messageID } }).then(() => null, (e) => e);
      expect(err).toBeInstanceOf(GraphQLRequestError);
      expect((err as GraphQLRequestError).errors[0].extensions?.code).toBe('FORBIDDEN');
    }
    expect(await state()).toEqual(before);
  });
});
