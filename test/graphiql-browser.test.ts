import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from './harness.js';
import { begin, createSession, registerHost, settle } from './fixtures.js';
import { openBrowser, screenshot, setEditor as setEditorIn } from './support/browser.js';
import { encodeCursor } from '../resolvers/cursors.js';

/**
 * GraphiQL in headless Chromium: the page loads with the network cut off except the
 * gateway itself, the Docs pane loads once a token is typed into the Headers tab, a query answers and a
 * subscription (graphql-ws, authenticated with the Headers tab's Authorization) receives a settlement.
 */
let g: TestGateway;
let browser: Browser;
let page: Page;
let offsite: string[];

beforeAll(async () => {
  g = await startTestGateway();
  ({ browser, page, offsite } = await openBrowser(new URL(g.url).origin));
});

afterAll(async () => {
  await browser?.close();
  await g?.stop();
});

/** The response pane's text without line breaks: GraphiQL wraps long values (an ID) across lines. */
const responseText = async () => (await page.locator('.graphiql-response').innerText()).replace(/\s+/g, '');
const setEditor = (which: 'query' | 'headers', text: string) => setEditorIn(page, which, text);
const shot = (name: string) => screenshot(page, 'graphiql', name);

it('works offline: Docs after the token, a query, a subscription that receives a settlement', async () => {
  const session = await createSession(g, { title: 'Seen in GraphiQL', directory: '/graphiql' });
  const workers: string[] = [];
  page.on('worker', (w) => workers.push(w.url()));
  await page.goto(g.url);
  await page.locator('.graphiql-container').first().waitFor({ timeout: 30_000 });
  await expect.poll(() => page.title()).toBe('Agent history gateway');
  // The editor's workers run from the gateway's static files (no blob: page-inlined copies).
  await expect.poll(() => workers.map((u) => u.split('/').at(-1)).sort(), { timeout: 20_000 }).toEqual(expect.arrayContaining(['editor.worker.js']));
  expect(workers.every((u) => u.startsWith(new URL(g.url).origin + '/graphiql/'))).toBe(true);

  // The Headers tab: the placeholder token is refused, so the schema waits for a real one.
  await page.getByText('Headers', { exact: true }).click();
  await setEditor('headers', JSON.stringify({ Authorization: `Bearer ${g.admin}` }));

  // The Docs pane loads without a manual re-fetch.
  await page.getByLabel('Show Documentation Explorer').click();
  await page.locator('.graphiql-doc-explorer').getByText('Subscription', { exact: false }).first().waitFor({ timeout: 20_000 });

  // A query answers.
  await setEditor('query', `{ session(id: "${session.id}") { id title } }`);
  await page.locator('.graphiql-execute-button').click();
  await page.locator('.graphiql-response').getByText('Seen in GraphiQL').waitFor({ timeout: 20_000 });
  await shot('query');

  // A subscription from the start of the log: it replays the first settlement (which also shows it
  // is live), then receives one made while it runs.
  const host = await registerHost(g);
  const e1 = await begin(g, host, session.id);
  await settle(g, host, e1.id);
  await setEditor('query',
    `subscription { executionSettled(sessionID: "${session.id}", after: "${encodeCursor('settlement', 0)}") { cursor executionID status } }`);
  await page.locator('.graphiql-execute-button').click();
  await expect.poll(responseText, { timeout: 20_000 }).toContain(e1.id);
  const e2 = await begin(g, host, session.id);
  await settle(g, host, e2.id, 'FAILED', { error: 'on purpose' });
  await expect.poll(responseText, { timeout: 20_000 }).toContain(e2.id);
  await expect.poll(() => page.locator('.graphiql-response').innerText()).toContain('FAILED');
  await shot('subscription');
  await page.locator('.graphiql-execute-button').click(); // stops the subscription

  expect(offsite).toEqual([]);
});

it('serves a small page and its assets as static files, gzipped, cached for good by version, by ETag', async () => {
  const first = await fetch(g.url, { headers: { accept: 'text/html', 'accept-encoding': 'gzip' } });
  expect(first.status).toBe(200);
  expect(first.headers.get('cache-control')).toBe('no-cache');
  const html = await first.text();
  // The page only points at its assets (it used to inline 9 MB of them).
  expect(html.length).toBeLessThan(2_000);
  expect(html).not.toMatch(/https?:\/\/(unpkg|cdn|jsdelivr)/);
  const urls = [...html.matchAll(/(?:src|href)="(graphiql\/[^"]+)"/g)].map((m) => new URL(m[1], g.url).toString());
  expect(urls.map((u) => u.split('/').at(-1))).toEqual(['favicon.ico', 'graphiql.css', 'graphql-ws.js', 'setup.js', 'graphiql.js', 'start.js']);
  const again = await fetch(g.url, { headers: { accept: 'text/html', 'if-none-match': first.headers.get('etag')! } });
  expect(again.status).toBe(304);
  let scripts = '';
  for (const u of [...urls, ...['editor', 'json', 'graphql'].map((w) => urls[3].replace('setup.js', `${w}.worker.js`))]) {
    const r = await fetch(u, { headers: { 'accept-encoding': 'gzip' } });
    expect(r.status, u).toBe(200);
    expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(r.headers.get('content-encoding')).toBe('gzip');
    const body = await r.text();
    if (u.endsWith('.js')) scripts += body;
    expect((await fetch(u, { headers: { 'if-none-match': r.headers.get('etag')! } })).status).toBe(304);
  }
  expect(scripts).toContain('renderYogaGraphiQL');
  expect(scripts).not.toMatch(/https?:\/\/(unpkg|cdn|jsdelivr)\.[a-z]+\//);
  // Another version's asset (a page cached from before a restart with other packages) is not served stale.
  expect((await fetch(urls[1].replace(/graphiql\/[^/]+\//, 'graphiql/old-version/'))).status).toBe(404);
});

it('a refused token ends the subscription with a clear message instead of spinning', async () => {
  await page.getByText('Headers', { exact: true }).click();
  await setEditor('headers', JSON.stringify({ Authorization: 'Bearer not-a-token' }));
  await setEditor('query', 'subscription { executionSettled { cursor } }');
  await page.locator('.graphiql-execute-button').click();
  await page.locator('.graphiql-response').getByText('4403').waitFor({ timeout: 20_000 });
  await shot('refused');
});
