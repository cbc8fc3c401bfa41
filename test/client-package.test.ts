import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_DIR } from '../db/index.js';
import { startTestGateway, type TestGateway } from './harness.js';
import { begin, createSession, registerHost, settle } from './fixtures.js';
import { openBrowser } from './support/browser.js';
import { encodeCursor } from '../resolvers/cursors.js';

/**
 * The typed client as an installed package: `@agent-history/client` resolved by
 * name through its `exports` (the workspace link), in Node 20 (no global WebSocket: `ws` loaded on
 * demand), in Chromium (the browser's WebSocket injected, no `ws` anywhere). The example OpenCode
 * plugins built on it are tested in a real OpenCode: test/opencode-plugins.test.ts.
 */
let g: TestGateway;
let pkg: typeof import('@agent-history/client');

beforeAll(async () => {
  const r = spawnSync(process.execPath, [path.join(PROJECT_DIR, 'node_modules/typescript/bin/tsc'), '-p', 'client/tsconfig.json'], { cwd: PROJECT_DIR, encoding: 'utf8' });
  expect(r.status, r.stdout + r.stderr).toBe(0);
  pkg = await import('@agent-history/client');
  g = await startTestGateway();
}, 120_000);

afterAll(async () => { await g?.stop(); });

/** The settlement log's current head as a cursor: subscribing after it misses nothing settled later. */
async function head(): Promise<string> {
  const [{ pos }] = await g.sql`SELECT coalesce(max(pos), 0) AS pos FROM settlements WHERE pos IS NOT NULL`;
  return encodeCursor('settlement', Number(pos));
}

describe('in Node', () => {
  it('is the built package (exports, types) with no static ws import', () => {
    const manifest = JSON.parse(readFileSync(path.join(PROJECT_DIR, 'client/package.json'), 'utf8'));
    expect(manifest.name).toBe('@agent-history/client');
    expect(manifest.private).toBeUndefined();
    expect(manifest.exports['.'].types).toBe('./dist/index.d.ts');
    const js = readFileSync(path.join(PROJECT_DIR, 'client/dist/index.js'), 'utf8');
    expect(js).not.toMatch(/^import .* from ['"]ws['"]/m);
    expect(readFileSync(path.join(PROJECT_DIR, 'client/dist/index.d.ts'), 'utf8')).toContain('class GatewayClient');
  });

  it('returns typed errors with _tag and resumes a subscription from its cursor after a restart', async () => {
    const gw = new pkg.GatewayClient({ url: g.url, token: g.admin });
    try {
      await expect(gw.call(pkg.SealSessionDocument, { input: { sessionID: 'ses_missing', timeoutMs: 0 } })).rejects.toMatchObject({
        error: { _tag: 'SessionNotFoundError', sessionID: 'ses_missing', code: 404 },
      });
      const host = await registerHost(g);
      const s = await createSession(g, { title: 'client package', directory: '/pkg' });
      const seen: string[] = [];
      const stop = gw.subscribe(pkg.ExecutionSettledDocument, { sessionID: s.id, after: await head() }, { next: (d) => seen.push(d.executionSettled.executionID) });
      const e1 = await begin(g, host, s.id);
      await settle(g, host, e1.id);
      await expect.poll(() => seen.length, { timeout: 15_000 }).toBe(1);
      let e2: any;
      await g.restart(async () => {
        // Settled while the gateway is down for the client: delivered after the reconnect, from the cursor.
        e2 = await begin(g, host, s.id).catch(() => null);
      });
      if (!e2) e2 = await begin(g, host, s.id);
      await settle(g, host, e2.id);
      await expect.poll(() => seen, { timeout: 20_000 }).toEqual([e1.id, e2.id]);
      stop();
    } finally {
      await gw.close();
    }
  });
});

it('works in a browser with the WebSocket implementation injected', async () => {
  const origin = new URL(g.url).origin;
  // A page fulfilled by the test (not loaded over the network) counts as public for Chromium's local
  // network access checks, which would block its WebSocket to 127.0.0.1; a real page of the gateway's would not.
  const { browser, page, offsite } = await openBrowser(origin, ['--disable-features=LocalNetworkAccessChecks']);
  try {
    // The page and the package's files are served at the gateway's origin (same origin: no CORS).
    const files: Record<string, string> = {
      '/__pkg/client/': path.join(PROJECT_DIR, 'client/dist/'),
      '/__pkg/graphql/': path.join(PROJECT_DIR, 'node_modules/graphql/'),
      '/__pkg/graphql-ws/': path.join(PROJECT_DIR, 'node_modules/graphql-ws/dist/'),
    };
    const host = await registerHost(g);
    const s = await createSession(g, { title: 'browser', directory: '/pkg' });
    const after = await head();
    const html = `<!doctype html><script type="importmap">${JSON.stringify({ imports: { graphql: '/__pkg/graphql/index.mjs', 'graphql-ws': '/__pkg/graphql-ws/client.js' } })}</script>
      <script type="module">
        import { GatewayClient, GatewayCallError, ExecutionSettledDocument, SealSessionDocument } from '/__pkg/client/index.js';
        const gw = new GatewayClient({ url: location.origin + '/graphql', token: ${JSON.stringify(g.admin)}, webSocketImpl: WebSocket });
        window.result = { events: [] };
        try { await gw.call(SealSessionDocument, { input: { sessionID: 'ses_nope', timeoutMs: 0 } }); }
        catch (e) { window.result.tag = e instanceof GatewayCallError ? e.error._tag : String(e); }
        gw.subscribe(ExecutionSettledDocument, { sessionID: ${JSON.stringify(s.id)}, after: ${JSON.stringify(after)} }, { next: (d) => window.result.events.push(d.executionSettled.status), error: (e) => { window.result.error = String(e?.code ?? e?.message ?? JSON.stringify(e)); } });
        window.result.ready = true;
      </script>`;
    await page.route(`${origin}/__pkg/**`, (route) => {
      const p = new URL(route.request().url()).pathname;
      if (p === '/__pkg/index.html') return route.fulfill({ contentType: 'text/html', body: html });
      const prefix = Object.keys(files).find((k) => p.startsWith(k));
      if (!prefix) return route.fulfill({ status: 404 });
      return route.fulfill({ contentType: 'text/javascript', body: readFileSync(files[prefix] + p.slice(prefix.length)) });
    });
    await page.goto(`${origin}/__pkg/index.html`);
    await expect.poll(() => page.evaluate(() => (window as any).result?.tag), { timeout: 20_000 }).toBe('SessionNotFoundError');
    // From the log's head before the page loaded: however late the socket opens, the settlement is replayed.
    const e = await begin(g, host, s.id);
    await settle(g, host, e.id, 'FAILED', { error: 'x' });
    await expect.poll(() => page.evaluate(() => { const r = (window as any).result; return r.error ? [r.error] : r.events; }), { timeout: 20_000 }).toEqual(['FAILED']);
    expect(offsite).toEqual([]);
  } finally {
    await browser.close();
  }
});
