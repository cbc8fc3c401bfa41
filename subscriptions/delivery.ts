import type { Socket } from 'node:net';
import type WebSocket from 'ws';
import { log } from '../server/logging.js';

/**
 * How subscription messages leave a WebSocket: batched per socket per event-loop turn.
 *
 * graphql-ws (use/ws) awaits each message's write callback before it takes the subscription's next
 * result, and `ws` writes each message with its own syscall: a subscriber receives at most one message
 * per event-loop turn, each turn costs one writev per socket, and a burst of events is paid turn by
 * turn. Here, for one connection:
 * - the TCP socket is corked at the first message of a turn and uncorked once the turn's work is done
 *   (one setImmediate for every socket corked in the turn), so the turn's messages to that socket go
 *   out in one write;
 * - while the socket's unsent data stays under `eagerBytes`, a message is queued without its sender
 *   waiting: graphql-ws (patched use/ws) asks `SEND_NOW` first, which queues it and says so, and hands
 *   out the subscription's next result at once, with no promise made for the write; a callback given
 *   to `send` is called as soon as the message is queued (in order, after it). Past `eagerBytes` the
 *   real write callback is kept (back-pressure), and the instance's slow-consumer cap
 *   (caps.closeIfSlow) still closes a socket that cannot keep up.
 * Order is unchanged (one queue per socket), nothing is dropped: a message is queued before its sender
 * goes on, and a failed write still closes the socket (and its subscriptions) as before.
 */
export function batchWrites(ws: WebSocket, eagerBytes = 256 * 1024): void {
  const raw = (ws as unknown as { _socket?: Socket })._socket;
  if (!raw || typeof raw.cork !== 'function') return; // not a TCP-backed socket: left as it is
  let corked = false;
  const uncork = () => { corked = false; if (!raw.destroyed) raw.uncork(); };
  const corkForTurn = () => {
    if (!corked && ws.readyState === ws.OPEN && !raw.destroyed) {
      corked = true;
      raw.cork();
      uncorkAfterTurn(uncork);
    }
  };
  const send = ws.send.bind(ws) as (data: unknown, opts?: unknown, cb?: (err?: Error) => void) => void;
  (ws as any).send = (data: unknown, optsOrCb?: unknown, maybeCb?: (err?: Error) => void) => {
    const cb = (typeof optsOrCb === 'function' ? optsOrCb : maybeCb) as ((err?: Error) => void) | undefined;
    const opts = typeof optsOrCb === 'function' ? undefined : optsOrCb;
    corkForTurn();
    // Not open (ws answers the callback with its refusal), past the threshold (back-pressure): the real callback.
    if (!cb || ws.readyState !== ws.OPEN || ws.bufferedAmount >= eagerBytes) return send(data, opts, cb);
    send(data, opts);
    queueMicrotask(() => cb());
  };
  (ws as any)[SEND_NOW] = (data: unknown): boolean => {
    if (ws.readyState !== ws.OPEN || ws.bufferedAmount >= eagerBytes) return false;
    corkForTurn();
    send(data);
    return true;
  };
}

/** What graphql-ws (patches/graphql-ws+6.4.2.patch, use/ws) asks a socket to queue a message without waiting. */
export const SEND_NOW = Symbol.for('graphql-ws.sendNow');

/**
 * The sockets corked this turn, uncorked together by one setImmediate (an event handed to 500
 * subscribers of an instance corks 500 sockets: one timer for all of them, not one each).
 */
let corkedThisTurn: (() => void)[] = [];
function uncorkAfterTurn(uncork: () => void): void {
  if (corkedThisTurn.length === 0) setImmediate(uncorkAll);
  corkedThisTurn.push(uncork);
}
function uncorkAll(): void {
  const list = corkedThisTurn;
  corkedThisTurn = [];
  for (const uncork of list) {
    try { uncork(); } catch (err) { log().error({ err }, 'delivery: uncorking a socket failed'); }
  }
}
