import { describe, expect, it } from 'vitest';
import { once } from 'node:events';
import WebSocket, { WebSocketServer } from 'ws';
import { sender } from '../subscriptions/delivery.js';

/**
 * subscriptions/delivery.ts over a real WebSocket on 127.0.0.1: the `send` graphql-ws' makeServer is
 * given. It queues a message and returns nothing to wait for while the socket's unsent data is small;
 * past the threshold it returns the write's promise (back-pressure). Messages arrive in the order they
 * were given, however they were given.
 */
/** A ws server on 127.0.0.1 with one client connected; the server side's send, threshold 1 KB. */
async function connectedPair() {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(wss, 'listening');
  const port = (wss.address() as { port: number }).port;
  const serverSide = new Promise<WebSocket>((resolve) => wss.once('connection', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${port}`);
  await once(client, 'open');
  const ws = await serverSide;
  return { wss, client, ws, send: sender(ws, 1024) };
}

describe('WebSocket delivery', () => {
  it('queues without waiting while unsent data is small, waits for the write past it, and keeps the order', async () => {
    const { wss, client, ws, send } = await connectedPair();
    const got: string[] = [];
    const all = new Promise<void>((resolve) => client.on('message', (d) => { got.push(String(d)); if (got.length === 4) resolve(); }));

    // All in one turn: the socket is corked, so what was queued counts as unsent.
    expect(send('1')).toBeUndefined();
    const big = 'x'.repeat(4096);
    expect(send(big)).toBeUndefined(); // under the threshold when given: queued
    expect(ws.bufferedAmount).toBeGreaterThanOrEqual(4096);
    const third = send('3');
    expect(third).toBeInstanceOf(Promise); // past it: the caller waits for the write
    await third;
    expect(send('4')).toBeUndefined(); // written out: small again
    await all;
    expect(got).toEqual(['1', big, '3', '4']);
    client.close();
    await once(client, 'close');
    wss.close();
  });

  it('a closed socket is not written to', async () => {
    const { wss, client, ws, send } = await connectedPair();
    client.close();
    await once(ws, 'close');
    expect(send('late')).toBeUndefined();
    expect(ws.bufferedAmount).toBe(0);
    wss.close();
  });
});
