// The typed client's connections: `close()` never throws (a subscription to an unreachable gateway, stopped
// or not, once rejected it with graphql-ws' `{code: 1000, reason: 'All Subscriptions Gone'}`), and a
// connection that cannot be made reaches the subscriber as a GatewayConnectionError naming the URL and the
// cause, within the retry policy client/README.md states (retried for `retryForMs`, 30 s by default); a
// refused token at once. HTTP calls to an unreachable gateway name the URL too.
import net from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_RETRY_FOR_MS, ExecutionSettledDocument, GatewayClient, GatewayConnectionError, ListSessionsDocument,
} from '../client/index.js';
import { onFeed, startTestGateway, type TestGateway } from './harness.js';
import { retrying } from '../host/snapshot-upload.js';

/** A port nothing listens on (taken from the system, then released). */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** The `ws` WebSocket, counting the connections the client attempts. */
function countingWebSocket() {
  const counter = { attempts: 0 };
  class Counting extends WebSocket {
    constructor(...args: ConstructorParameters<typeof WebSocket>) {
      super(...args);
      counter.attempts++;
    }
  }
  return { counter, Counting };
}

/** The first error a subscription gets, and how long after subscribing it came. */
function firstError(gw: GatewayClient, variables: { sessionID?: string; after?: string | null } = { after: null }) {
  const started = Date.now();
  return new Promise<{ error: unknown; ms: number }>((resolve) => {
    gw.subscribe(ExecutionSettledDocument, variables, { next: () => {}, error: (error) => resolve({ error, ms: Date.now() - started }) });
  });
}

describe('an unreachable gateway', () => {
  let port: number;
  let url: string;
  let wsUrl: string;
  beforeAll(async () => {
    port = await closedPort();
    url = `http://127.0.0.1:${port}/graphql`;
    wsUrl = `ws://127.0.0.1:${port}/graphql`;
  });

  it('close() resolves after a subscription was stopped at once, or while its connection was being retried', async () => {
    const now = new GatewayClient({ url, token: 't', webSocketImpl: WebSocket });
    const errors: unknown[] = [];
    now.subscribe(ExecutionSettledDocument, { after: null }, { next: () => {}, error: (e) => errors.push(e) })();
    await expect(now.close()).resolves.toBeUndefined();

    const { counter, Counting } = countingWebSocket();
    const retrying = new GatewayClient({ url, token: 't', webSocketImpl: Counting });
    const stop = retrying.subscribe(ExecutionSettledDocument, { after: null }, { next: () => {}, error: (e) => errors.push(e) });
    // A second attempt has started: the first failed, and the client is retrying (graphql-ws' connect in flight).
    await expect.poll(() => counter.attempts, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    stop();
    await expect(retrying.close()).resolves.toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('close() resolves with a subscription still running on a connection being retried', async () => {
    const { counter, Counting } = countingWebSocket();
    const gw = new GatewayClient({ url, token: 't', webSocketImpl: Counting });
    const ended: string[] = [];
    gw.subscribe(ExecutionSettledDocument, { after: null }, { next: () => {}, error: () => ended.push('error'), complete: () => ended.push('complete') });
    await expect.poll(() => counter.attempts, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    await expect(gw.close()).resolves.toBeUndefined();
    // Closed by its client: the subscription completes, it is not reported as a failure.
    await expect.poll(() => ended, { timeout: 5_000 }).toEqual(['complete']);
  });

  it('a subscription gets a GatewayConnectionError with the URL and the cause once retryForMs has passed', async () => {
    const gw = new GatewayClient({ url, token: 't', webSocketImpl: WebSocket, retryForMs: 1_000 });
    try {
      const { error, ms } = await firstError(gw);
      expect(error).toBeInstanceOf(GatewayConnectionError);
      const e = error as GatewayConnectionError;
      expect(e.url).toBe(wsUrl);
      expect(e.message).toContain(`cannot connect to ${wsUrl}`);
      expect(e.message).toMatch(/ECONNREFUSED/);
      expect(e.message).toMatch(/retried for \d/);
      // Not before the policy's time, and within it plus one backoff (at most 2 s) and an attempt.
      expect(ms).toBeGreaterThanOrEqual(1_000);
      expect(ms).toBeLessThan(1_000 + 2_000 + 1_500);
    } finally {
      await gw.close();
    }
  });

  it('by default, after the 30 s the README states', async () => {
    expect(DEFAULT_RETRY_FOR_MS).toBe(30_000);
    // The client's clock is faked (only Date: its retry waits stay real) and moved 7 s on at every connection
    // attempt, so 30 s of retrying take a few real seconds. Failing at 0, 7, 14, 21 and 28 s is retried; the
    // attempt failing at 35 s is the first past the 30 s, and the error names how long the client retried.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const counter = { attempts: 0 };
      class SlowClock extends WebSocket {
        constructor(...args: ConstructorParameters<typeof WebSocket>) {
          if (counter.attempts++ > 0) vi.setSystemTime(Date.now() + 7_000);
          super(...args);
        }
      }
      const gw = new GatewayClient({ url, token: 't', webSocketImpl: SlowClock });
      try {
        const { error, ms } = await firstError(gw);
        expect(error).toBeInstanceOf(GatewayConnectionError);
        expect((error as Error).message).toMatch(/ECONNREFUSED/);
        expect((error as Error).message).toMatch(/\(retried for 35 s\)$/);
        expect(counter.attempts).toBe(6);
        expect(ms).toBe(35_000);
      } finally {
        await gw.close();
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('a request names the URL and the cause', async () => {
    const gw = new GatewayClient({ url, token: 't' });
    const e = await gw.request(ListSessionsDocument, { first: 1 }).catch((x) => x);
    expect(e).toBeInstanceOf(GatewayConnectionError);
    expect(e.url).toBe(url);
    expect(e.message).toBe(`cannot connect to ${url}: fetch failed (connect ECONNREFUSED 127.0.0.1:${port})`);
    expect(e.reason).toBe(`fetch failed (connect ECONNREFUSED 127.0.0.1:${port})`);
  });
});

describe('a running gateway', () => {
  let g: TestGateway;
  beforeAll(async () => { g = await startTestGateway(); });
  afterAll(async () => { await g?.stop(); });

  it('a refused token is reported at once (4403), not retried', async () => {
    const { counter, Counting } = countingWebSocket();
    const gw = new GatewayClient({ url: g.url, token: 'not-a-token', webSocketImpl: Counting });
    try {
      const { error, ms } = await firstError(gw);
      expect(error).toBeInstanceOf(GatewayConnectionError);
      expect((error as GatewayConnectionError).code).toBe(4403);
      expect((error as Error).message).toBe(`cannot connect to ${g.wsUrl}: closed with 4403 Forbidden: not a gateway token (Bearer gw_…, as gateway token create printed it)`);
      expect(ms).toBeLessThan(5_000);
      expect(counter.attempts).toBe(1);
    } finally {
      await gw.close();
    }
  });

  it('a connection lost for longer than retryForMs is reported; one back sooner resumes (client-package.test.ts)', async () => {
    const gw = new GatewayClient({ url: g.url, token: g.admin, webSocketImpl: WebSocket, retryForMs: 1_500 });
    try {
      const failure = firstError(gw);
      await onFeed(() => g.app.gateway.settlements.subscribers, 1);
      let reported: { error: unknown; ms: number } | undefined;
      // Down until the subscriber was told, however long that takes; then up again.
      await g.restart(async () => { reported = await failure; });
      expect(reported!.error).toBeInstanceOf(GatewayConnectionError);
      expect((reported!.error as GatewayConnectionError).url).toBe(g.wsUrl);
    } finally {
      await gw.close();
    }
  });
});

describe('the reference host\'s uploads', () => {
  it('retry a connection reset the client reports as a GatewayConnectionError, and nothing else', async () => {
    const reset = () => new GatewayConnectionError('http://127.0.0.1:1/graphql', Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('other side closed'), { code: 'ECONNRESET' }) }));
    let calls = 0;
    await expect(retrying(async () => { if (++calls < 3) throw reset(); return 'uploaded'; })).resolves.toBe('uploaded');
    expect(calls).toBe(3);
    calls = 0;
    await expect(retrying(async () => { calls++; throw reset(); })).rejects.toBeInstanceOf(GatewayConnectionError);
    expect(calls).toBe(4);
    calls = 0;
    const refused = new GatewayConnectionError('ws://127.0.0.1:1/graphql', { code: 4403, reason: 'Forbidden' });
    await expect(retrying(async () => { calls++; throw refused; })).rejects.toBe(refused);
    expect(calls).toBe(1);
  });
});
