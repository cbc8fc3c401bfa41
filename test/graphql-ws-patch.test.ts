import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildSchema, parse } from 'graphql';
import { makeServer, MessageType } from 'graphql-ws';

/**
 * The patched dependency (patches/graphql-ws+6.4.2.patch), at its own protocol surface: a batch of
 * results (RESULT_BATCH, what subscriptions/shared.ts hands out) goes out as one `next` message each, in
 * order, with onNext called for each; a batch that fails half way (onNext throws while a queued write
 * fails) ends the subscription with an error message and leaves no promise rejected unhandled (which
 * would end the process); single results on a socket whose send returns nothing (use/ws asking the
 * gateway's SEND_NOW, subscriptions/delivery.ts) go out without a wait each, in order, and fail as before.
 * The batch path under real load is test/subscriptions-fanout.test.ts.
 */
const RESULT_BATCH = Symbol.for('graphql-ws.resultBatch');
const schema = buildSchema('type Query { x: Int } type Subscription { n: Int }');

const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => { unhandled.push(e); };
beforeAll(() => { process.on('unhandledRejection', onUnhandled); });
afterAll(() => { process.off('unhandledRejection', onUnhandled); });

function batchOf(values: number[]) {
  const b = values.map((n) => ({ data: { n } }));
  Object.defineProperty(b, RESULT_BATCH, { value: true });
  return b;
}

/** A server whose one subscription yields `batches`, on an in-memory socket; resolves with what was sent once it ends. */
async function run(batches: unknown[], opts: { onNext?: (n: number) => void; send?: (msg: any, i: number) => Promise<void> | void; syncSend?: boolean }) {
  const sent: any[] = [];
  let handler: ((data: string) => Promise<void>) | null = null;
  let ended!: () => void;
  const done = new Promise<void>((r) => { ended = r; });
  const server = makeServer({
    schema,
    onSubscribe: () => ({ schema, document: parse('subscription { n }') }),
    subscribe: async () => (async function* () { for (const b of batches) yield b as any; })(),
    onNext: (_ctx, _id, _payload, _args, result) => { opts.onNext?.((result as any).data.n); },
    onComplete: () => ended(),
    onError: () => { ended(); },
  });
  server.opened({
    protocol: 'graphql-transport-ws',
    // syncSend: a socket that queues at once and returns nothing (use/ws with the gateway's SEND_NOW).
    send: opts.syncSend
      ? (data) => {
        const msg = JSON.parse(data);
        sent.push(msg);
        if (msg.type === MessageType.Error) ended();
      }
      : async (data) => {
        const msg = JSON.parse(data);
        sent.push(msg);
        if (msg.type === MessageType.Error) ended();
        await opts.send?.(msg, sent.length - 1);
      },
    close: () => ended(),
    onMessage: (cb) => { handler = cb; },
  }, {});
  await handler!(JSON.stringify({ type: MessageType.ConnectionInit }));
  await handler!(JSON.stringify({ type: MessageType.Subscribe, id: 's1', payload: { query: 'subscription { n }' } }));
  await done;
  // Let any rejection left behind surface before the assertions.
  await new Promise((r) => setImmediate(r));
  return sent;
}

test('a batch of results goes out as one next message each, in order, onNext called for each', async () => {
  const seen: number[] = [];
  const sent = await run([batchOf([1, 2, 3]), batchOf([4])], { onNext: (n) => seen.push(n) });
  expect(sent.filter((m) => m.type === MessageType.Next).map((m) => [m.id, m.payload.data.n])).toEqual([['s1', 1], ['s1', 2], ['s1', 3], ['s1', 4]]);
  expect(sent.at(-1).type).toBe(MessageType.Complete);
  expect(seen).toEqual([1, 2, 3, 4]);
});

test('a batch failing half way (a queued write fails, then onNext throws) errors the subscription; nothing is rejected unhandled', async () => {
  const sent = await run([batchOf([1, 2, 3])], {
    onNext: (n) => { if (n === 2) throw new Error('onNext failed'); },
    send: (msg) => { if (msg.type === MessageType.Next && msg.payload.data.n === 1) return Promise.reject(new Error('write failed')); },
  });
  expect(sent.filter((m) => m.type === MessageType.Next).map((m) => m.payload.data.n)).toEqual([1]);
  expect(sent.at(-1).type).toBe(MessageType.Error);
  expect(unhandled).toEqual([]);
});

test('single results on a socket whose send returns nothing go out in order, onNext called for each, then complete', async () => {
  const seen: number[] = [];
  const sent = await run([1, 2, 3].map((n) => ({ data: { n } })), { onNext: (n) => seen.push(n), syncSend: true });
  expect(sent.filter((m) => m.type === MessageType.Next).map((m) => [m.id, m.payload.data.n])).toEqual([['s1', 1], ['s1', 2], ['s1', 3]]);
  expect(sent.at(-1).type).toBe(MessageType.Complete);
  expect(seen).toEqual([1, 2, 3]);
});

test('onNext throwing at once on such a socket errors the subscription after what went before; nothing is rejected unhandled', async () => {
  const sent = await run([1, 2, 3].map((n) => ({ data: { n } })), { onNext: (n) => { if (n === 2) throw new Error('onNext failed'); }, syncSend: true });
  expect(sent.filter((m) => m.type === MessageType.Next).map((m) => m.payload.data.n)).toEqual([1]);
  expect(sent.at(-1).type).toBe(MessageType.Error);
  expect(unhandled).toEqual([]);
});
