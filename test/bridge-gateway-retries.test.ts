import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Gateway } from '../bridge/common/gateway.js';
import { LatestSettlementCursorDocument } from '../client/generated.js';

/**
 * What a host does with each answer of the gateway (bridge/common/gateway.ts, `Gateway.request`): it retries
 * while the gateway is away or its database is (503 DATABASE_UNAVAILABLE), retries a masked internal error
 * (500) a few times, and throws the rest. The gateway here is a scripted HTTP server: the subject is the
 * host's policy for each status, which a real gateway cannot be made to answer on demand.
 */
describe('a host retrying the gateway', () => {
  const servers: http.Server[] = [];
  afterEach(async () => { await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r)))); });

  /** A gateway answering each request with the next status of `statuses` (the last one from then on). */
  async function scripted(statuses: number[]): Promise<{ url: string; requests: () => number }> {
    let n = 0;
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const status = statuses[Math.min(n++, statuses.length - 1)];
        const body = status === 200
          ? { data: { latestSettlementCursor: 'v1:settlement:7' } }
          : { errors: [{ message: status === 503 ? 'The database is unavailable.' : status === 500 ? 'Unexpected error.' : 'Bad request.', extensions: { code: status === 503 ? 'DATABASE_UNAVAILABLE' : status === 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_USER_INPUT' } }] };
        res.writeHead(status, { 'content-type': 'application/json', ...(status === 503 ? { 'retry-after': '1' } : {}) });
        res.end(JSON.stringify(body));
      });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`, requests: () => n };
  }

  it('retries a database that is away (503) until it answers', async () => {
    const gw = await scripted([503, 503, 503, 200]);
    const logs: string[] = [];
    const answer = await new Gateway(gw.url, 'gw_host', 'gw_plugin', (m) => logs.push(m)).request(LatestSettlementCursorDocument, {}, 'plugin');
    expect(answer).toEqual({ latestSettlementCursor: 'v1:settlement:7' });
    expect(gw.requests()).toBe(4);
    expect(logs[0]).toContain('HTTP 503');
  });

  it('retries a masked internal error (500) a few times, then throws it instead of hanging', async () => {
    const gw = await scripted([500]);
    await expect(new Gateway(gw.url, 'gw_host', 'gw_plugin').request(LatestSettlementCursorDocument, {}, 'plugin'))
      .rejects.toThrow(/latestSettlementCursor: Unexpected error/);
    expect(gw.requests()).toBe(4);
    const transient = await scripted([500, 500, 200]);
    await expect(new Gateway(transient.url, 'gw_host', 'gw_plugin').request(LatestSettlementCursorDocument, {}, 'plugin'))
      .resolves.toEqual({ latestSettlementCursor: 'v1:settlement:7' });
  });

  it('throws an answer to the request itself (4xx) at once', async () => {
    const gw = await scripted([400]);
    await expect(new Gateway(gw.url, 'gw_host', 'gw_plugin').request(LatestSettlementCursorDocument, {}, 'plugin')).rejects.toThrow(/Bad request/);
    expect(gw.requests()).toBe(1);
  });
});
