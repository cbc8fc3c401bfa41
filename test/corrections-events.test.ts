import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import {
  AppendMessageDocument, BeginExecutionDocument, CorrectMessagePartDocument, CreateSessionDocument, GatewayCallError,
  GatewayClient, RegisterHostDocument, RetractMessageDocument, SettleExecutionDocument, TranscriptEventsDocument,
  type TranscriptEventsSubscription,
} from '../client/index.js';
import { RETRACTION_PLACEHOLDER } from '../domain/corrections.js';

let g: TestGateway;
let pluginToken: string;
let host: GatewayClient;
let hostID: string;
const clients: GatewayClient[] = [];

beforeAll(async () => {
  g = await startTestGateway();
  pluginToken = await g.token('plugin');
  host = new GatewayClient({ url: g.url, token: await g.token('host') });
  hostID = ((await host.call(RegisterHostDocument, { input: { name: 'events-host', leaseMs: 60_000 } })) as any).id;
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await g?.stop();
});

type Ev = TranscriptEventsSubscription['sessionEvents'];

/** A plugin-side subscriber: collects events, and can wait for one that satisfies a predicate. */
function follow(client: GatewayClient, sessionID: string, after: string | null) {
  const events: Ev[] = [];
  const errors: unknown[] = [];
  const stop = client.subscribe(TranscriptEventsDocument, { sessionID, after }, {
    next: (d) => events.push(d.sessionEvents),
    error: (e) => errors.push(e),
  });
  return {
    events,
    stop,
    async until(pred: (e: Ev) => boolean, timeoutMs = 10_000): Promise<Ev> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = events.find(pred);
        if (hit) return hit;
        if (errors.length) throw new Error(`subscription error: ${JSON.stringify(errors)}`);
        if (Date.now() > deadline) throw new Error(`timed out; got ${events.map((e) => `${e.sequence}:${e.type}`).join(', ')}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

function newPlugin() {
  const c = new GatewayClient({ url: g.url, wsUrl: g.wsUrl, token: pluginToken });
  clients.push(c);
  return c;
}

const textOf = (e: Ev) => (e.message?.parts ?? []).map((p: any) => p.text).join('|');

it('live subscribers see corrections and retractions (as the current message), and a resumed subscriber misses nothing', async () => {
  const plugin = newPlugin();
  const s = ((await plugin.call(CreateSessionDocument, { input: { directory: '/w/events' } })) as any).id as string;
  const m: any = await host.call(AppendMessageDocument, { input: { sessionID: s, role: 'USER', origin: 'SYNTHETIC', parts: [{ type: 'TEXT', text: 'notice v1' }] } });
  const partID = m.parts[0].id;

  // From the beginning of the journal, then live.
  const start = Buffer.from('journal:0').toString('base64url');
  const live = follow(plugin, s, start);
  await live.until((e) => e.type === 'message.appended' && e.messageID === m.id);
  expect(textOf(live.events.find((e) => e.type === 'message.appended')!)).toBe('notice v1');

  await plugin.call(CorrectMessagePartDocument, { input: { messageID: m.id, partID, text: 'notice v2' } });
  const corrected = await live.until((e) => e.type === 'message.part_corrected');
  expect(corrected).toMatchObject({ messageID: m.id, partID });
  expect(textOf(corrected)).toBe('notice v2');
  expect(corrected.message?.revision).toBe(2);

  // A rejected (busy) correction publishes nothing.
  const exe = ((await host.call(BeginExecutionDocument, { input: { sessionID: s, hostID, trigger: 'PROMPT' } })) as any).id;
  const busy = await plugin.call(CorrectMessagePartDocument, { input: { messageID: m.id, partID, text: 'never' } }).catch((e) => e);
  expect(busy).toBeInstanceOf(GatewayCallError);
  expect(busy.error._tag).toBe('SessionBusyError');
  await host.call(SettleExecutionDocument, { input: { executionID: exe, status: 'SUCCEEDED' } });
  await live.until((e) => e.type === 'execution.settled');

  // The subscriber goes away at a known cursor; things happen while it is gone.
  const lastSeen = live.events.at(-1)!;
  live.stop();
  await plugin.close();
  await plugin.call(CorrectMessagePartDocument, { input: { messageID: m.id, partID, text: 'notice v3' } });
  const n: any = await host.call(AppendMessageDocument, { input: { sessionID: s, role: 'USER', origin: 'SYNTHETIC', parts: [{ type: 'TEXT', text: 'second notice' }] } });
  await plugin.call(RetractMessageDocument, { input: { messageID: m.id, reason: 'superseded' } });

  // Resume after the last cursor: exactly the missed events, in order, then live ones.
  const resumed = follow(newPlugin(), s, lastSeen.cursor);
  await resumed.until((e) => e.type === 'message.retracted');
  await plugin.call(RetractMessageDocument, { input: { messageID: n.id } });
  await resumed.until((e) => e.type === 'message.retracted' && e.messageID === n.id);

  const seqs = resumed.events.map((e) => e.sequence);
  expect(seqs[0]).toBe(lastSeen.sequence + 1);
  expect(seqs).toEqual(seqs.map((_, i) => lastSeen.sequence + 1 + i)); // no gap, no duplicate
  expect(resumed.events.map((e) => e.type)).toEqual(['message.part_corrected', 'message.appended', 'message.retracted', 'message.retracted']);
  // Events name what changed; the message reads as it is now: the retracted notice is its placeholder.
  const retracted = resumed.events.find((e) => e.type === 'message.retracted' && e.messageID === m.id)!;
  expect(retracted.message?.parts).toEqual([expect.objectContaining({ id: partID, text: RETRACTION_PLACEHOLDER })]);
  expect(JSON.stringify(resumed.events)).not.toContain('notice v3');
  // Every event the two subscribers saw, together, is the journal without gap or duplicate.
  const all = [...live.events.map((e) => e.sequence), ...seqs];
  const [{ head }] = await g.sql`SELECT max(seq)::int AS head FROM journal WHERE session_id = ${s}`;
  expect(all).toEqual(Array.from({ length: head }, (_, i) => i + 1));
  resumed.stop();
});
