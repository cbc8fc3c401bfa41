import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { CloseCode, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import type WebSocket from 'ws';
import type { WebSocketServer } from 'ws';

/** What every graphql-ws callback finds in `ctx.extra` (the same as graphql-ws/use/ws gives). */
export interface SocketExtra {
  readonly socket: WebSocket;
  readonly request: IncomingMessage;
}

export interface DeliveryOptions {
  /** A ping every this many ms; a socket that does not answer within the next as many ms is terminated (0: no pings). */
  keepAliveMs?: number;
  /** While a socket's unsent data stays under this many bytes, a message is queued without its sender waiting for the write. */
  eagerBytes?: number;
  /** Logs an internal failure (a socket or server error, a message handler that threw). */
  onInternalError?: (err: unknown, where: string) => void;
}

/**
 * GraphQL over WebSocket (graphql-ws' `graphql-transport-ws` protocol) on a `ws` server: graphql-ws'
 * own `makeServer` speaks the protocol; this is the socket glue graphql-ws/use/ws would be (pings,
 * protocol negotiation, close codes), with one difference, how a message leaves the socket:
 * - the TCP socket is corked at the first message of an event-loop turn and uncorked once the turn's
 *   work is done (one setImmediate for every socket corked in the turn), so the messages of a turn to
 *   one socket go out in one write instead of one syscall each;
 * - while the socket's unsent data stays under `eagerBytes`, `send` queues the message and returns at
 *   once, so the subscription takes its next result without waiting for the write; past it, `send`
 *   waits for the write callback (back-pressure; the instance's slow-consumer cap, caps.closeIfSlow,
 *   still closes a socket that cannot keep up).
 * Order is unchanged (one queue per socket) and nothing is dropped: a message is queued before its
 * sender goes on, and a failed write closes the socket, which ends its subscriptions.
 */
export function serveGraphQLWs<P extends Record<PropertyKey, unknown>, E extends Record<PropertyKey, unknown>>(
  options: ServerOptions<P, SocketExtra & Partial<E>>,
  wss: WebSocketServer,
  opts: DeliveryOptions = {},
): { dispose(): Promise<void> } {
  const keepAlive = opts.keepAliveMs ?? 12_000;
  const eagerBytes = opts.eagerBytes ?? 256 * 1024;
  const internal = opts.onInternalError ?? (() => {});
  const server = makeServer(options);
  wss.options.handleProtocols = handleProtocols;

  wss.once('error', (err) => {
    internal(err, 'ws server');
    for (const client of wss.clients) {
      try { client.close(CloseCode.InternalServerError, 'Internal server error'); } catch { /* already closing */ }
    }
  });

  wss.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    socket.once('error', (err) => {
      internal(err, 'ws socket');
      socket.close(CloseCode.InternalServerError, 'Internal server error');
    });
    let pongWait: NodeJS.Timeout | null = null;
    const pingInterval = keepAlive > 0 && Number.isFinite(keepAlive) ? setInterval(() => {
      if (socket.readyState !== socket.OPEN) return;
      pongWait = setTimeout(() => socket.terminate(), keepAlive);
      socket.once('pong', () => { if (pongWait) { clearTimeout(pongWait); pongWait = null; } });
      socket.ping();
    }, keepAlive) : null;

    const send = sender(socket, eagerBytes);
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send,
        close: (code, reason) => socket.close(code, reason),
        onMessage: (cb) => socket.on('message', async (data) => {
          try {
            await cb(String(data));
          } catch (err) {
            internal(err, 'ws message');
            socket.close(CloseCode.InternalServerError, 'Internal server error');
          }
        }),
      },
      { socket, request } as SocketExtra & Partial<E>,
    );
    socket.once('close', (code, reason) => {
      if (pongWait) clearTimeout(pongWait);
      if (pingInterval) clearInterval(pingInterval);
      void closed(code, String(reason));
    });
  });

  return {
    async dispose() {
      for (const client of wss.clients) client.close(1001, 'Going away');
      wss.removeAllListeners();
      await new Promise<void>((resolve, reject) => wss.close((err) => (err ? reject(err) : resolve())));
    },
  };
}

/**
 * The socket's `send` for graphql-ws: nothing to wait for (undefined) while the message could be
 * queued under `eagerBytes`, the write's promise otherwise. A closed socket is not written to.
 */
export function sender(socket: WebSocket, eagerBytes: number): (data: string) => Promise<void> | undefined {
  const raw = (socket as unknown as { _socket?: Socket })._socket;
  const corkable = !!raw && typeof raw.cork === 'function';
  let corked = false;
  const uncork = () => { corked = false; if (!raw!.destroyed) raw!.uncork(); };
  return (data) => {
    if (socket.readyState !== socket.OPEN) return undefined;
    if (corkable && !corked && !raw!.destroyed) {
      corked = true;
      raw!.cork();
      uncorkAfterTurn(uncork);
    }
    if (socket.bufferedAmount < eagerBytes) {
      socket.send(data);
      return undefined;
    }
    return new Promise<void>((resolve, reject) => socket.send(data, (err) => (err ? reject(err) : resolve())));
  };
}

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
  // One socket's failure must not leave the others corked.
  for (const uncork of list) { try { uncork(); } catch { /* a destroyed socket: nothing to write */ } }
}
