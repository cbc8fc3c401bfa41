// GraphiQL keeps the Headers tab (the admin token) only in the page: nothing of it reaches localStorage unless
// the user turns "Persist headers" on in GraphiQL's settings, and a token an earlier page stored without that
// choice is removed when the page loads (server/graphiql.ts). Headless Chromium, as test/graphiql-browser.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from './harness.js';
import { openBrowser, setEditor } from './support/browser.js';

let g: TestGateway;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  g = await startTestGateway();
  ({ browser, page } = await openBrowser(new URL(g.url).origin));
});

afterAll(async () => {
  await browser?.close();
  await g?.stop();
});

/** Every localStorage entry of the gateway's origin. */
const storage = () => page.evaluate(() => Object.fromEntries(Object.entries(window.localStorage)));
const stored = async () => JSON.stringify(await storage());

async function open() {
  await page.goto(g.url);
  await page.locator('.graphiql-container').first().waitFor({ timeout: 30_000 });
}

/** Puts the admin token in the Headers tab and runs a query with it (so GraphiQL has stored what it stores). */
async function useToken() {
  await page.getByText('Headers', { exact: true }).click();
  await setEditor(page, 'headers', JSON.stringify({ Authorization: `Bearer ${g.admin}` }));
  await setEditor(page, 'query', '{ sessions(first: 1) { pageInfo { hasNextPage } } }');
  await page.locator('.graphiql-execute-button').click();
  await page.locator('.graphiql-response').getByText('hasNextPage').waitFor({ timeout: 20_000 });
}

const headersShown = async () => (await page.locator('.monaco-editor[data-uri$="headers.json"]').first().locator('.view-lines').innerText()).replace(/\u00a0/g, ' ');

describe('GraphiQL\'s headers', () => {
  it('are not kept in localStorage, and are gone after a reload', async () => {
    await open();
    await useToken();
    // GraphiQL stores its tabs and query as it goes: wait for the tab with this query, then look for the token.
    await expect.poll(stored, { timeout: 10_000 }).toContain('hasNextPage');
    expect(await stored()).not.toContain(g.admin);
    await open();
    await page.getByText('Headers', { exact: true }).click();
    expect(await headersShown()).not.toContain(g.admin);
    expect(await stored()).not.toContain(g.admin);
  });

  it('a token an earlier page stored without being asked is removed when the page loads', async () => {
    // Written from another page of the origin, where no GraphiQL runs to write its own state meanwhile.
    await page.goto(g.url.replace(/\/graphql$/, '/health'));
    const headers = JSON.stringify({ Authorization: `Bearer ${g.admin}` });
    await page.evaluate((h) => {
      window.localStorage.setItem('graphiql:headers', h);
      window.localStorage.setItem('graphiql:tabState', JSON.stringify({
        activeTabIndex: 0,
        tabs: [{ id: 'old', hash: null, title: 'old', query: '{ __typename }', variables: null, headers: h, operationName: null, response: null }],
      }));
    }, headers);
    await open();
    await page.getByText('Headers', { exact: true }).click();
    expect(await headersShown()).not.toContain(g.admin);
    expect(await stored()).not.toContain(g.admin);
    expect(await stored()).toContain('{ __typename }'); // the tab itself is kept
  });

  it('are kept when the user turns "Persist headers" on in the settings', async () => {
    await open();
    await page.getByLabel('Open settings dialog').click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Persist headers').waitFor({ timeout: 10_000 });
    // The setting's "On" (GraphiQL's own id for it), shown because the gateway leaves the choice to the user.
    await dialog.locator('#enable-persist-headers').click();
    await expect.poll(() => storage().then((s) => s['graphiql:shouldPersistHeaders']), { timeout: 10_000 }).toBe('true');
    await page.keyboard.press('Escape');
    await useToken();
    await expect.poll(stored, { timeout: 10_000 }).toContain(g.admin);
    await open();
    await page.getByText('Headers', { exact: true }).click();
    await expect.poll(headersShown, { timeout: 10_000 }).toContain(g.admin);
  });
});
