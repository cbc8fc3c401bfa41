import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import WebSocket, { WebSocketServer } from 'ws';
import { batchWrites, SEND_NOW } from '../subscriptions/delivery.js';

/**
 * subscriptions/delivery.ts over a real WebSocket on 127.0.0.1: what graphql-ws's patched use/ws relies
 * on. SEND_NOW queues a message and says the sender need not wait while the socket's unsent data is
 * small; past the threshold it refuses (the caller then waits for the write callback: back-pressure).
 * Messages arrive in the order they were given, however they were given.
 */
/** A ws server on 127.0.0.1 with one client connected; the server's socket writes batched, threshold 1 KB. */
async function connectedPair() {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(wss, 'listening');
  const port = (wss.address() as { port: number }).port;
  const serverSide = new Promise<WebSocket>((resolve) => wss.once('connection', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${port}`);
  await once(client, 'open');
  const ws = await serverSide;
  batchWrites(ws, 1024);
  return { wss, client, ws };
}

describe('batched WebSocket writes', () => {
  it('queue without waiting while unsent data is small, refuse past it, and keep the order', async () => {
    const { wss, client, ws } = await connectedPair();
    const sendNow = (ws as any)[SEND_NOW] as (data: string) => boolean;
    const got: string[] = [];
    const all = new Promise<void>((resolve) => client.on('message', (d) => { got.push(String(d)); if (got.length === 5) resolve(); }));

    // All in one turn: the socket is corked, so what was queued counts as unsent.
    expect(sendNow('1')).toBe(true);
    const big = 'x'.repeat(4096);
    let wrote = false;
    ws.send(big, () => { wrote = true; });
    expect(ws.bufferedAmount).toBeGreaterThanOrEqual(4096);
    expect(sendNow('3')).toBe(false); // refused: nothing queued
    // The caller then sends with a callback, which waits for the real write.
    const third = new Promise<void>((resolve, reject) => ws.send('3', (err) => (err ? reject(err) : resolve())));
    ws.send('4');
    expect(wrote).toBe(false);
    await third;
    expect(wrote).toBe(true);
    expect(sendNow('5')).toBe(true); // written out: small again
    await all;
    expect(got).toEqual(['1', big, '3', '4', '5']);
    client.close();
    await once(client, 'close');
    wss.close();
  });

  it('a closed socket is not written to', async () => {
    const { wss, client, ws } = await connectedPair();
    client.close();
    await once(ws, 'close');
    // Not queued, and a callback hears ws's refusal (not an early "written").
    expect(((ws as any)[SEND_NOW] as (d: string) => boolean)('late')).toBe(false);
    const err = await new Promise<Error | undefined>((resolve) => ws.send('late', (e) => resolve(e)));
    expect(err).toBeInstanceOf(Error);
    wss.close();
  });
});
