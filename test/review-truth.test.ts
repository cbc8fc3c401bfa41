import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from './harness.js';
import { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { changesetKit, write } from './support/changeset-kit.js';
import { ensureReviewBuilt } from '../server/review.js';
import { runDemo } from '../host/demo.js';

/**
 * The review page says only what is true (issue 49), in Chromium: an unknown changeset is never a count of zero,
 * a prompt is shown only on the execution that answered it.
 */
const WAIT = 30_000;

let g: TestGateway;
let host: ReferenceHost;
let browser: Browser;
let page: Page;
let reader: string;
const dirs: string[] = [];
const kit = changesetKit(() => ({ g, host }), dirs);

async function session(title: string, directory = '/w/review-truth'): Promise<string> {
  const r = await g.gql(`mutation($input: CreateSessionInput!) { createSession(input: $input) { __typename ... on Session { id } } }`,
    { input: { title, directory } });
  return r.data.createSession.id;
}

const base = () => g.url.replace(/\/graphql$/, '');
const open = (hash: string) => page.goto(`${base()}/review/${hash}`);
const row = (executionID: string) => page.locator(`tr.execution-row[data-execution="${executionID}"]`);

beforeAll(async () => {
  await ensureReviewBuilt();
  g = await startTestGateway();
  host = new ReferenceHost({ url: g.url, token: await g.token('host'), leaseMs: 600_000 });
  await host.start();
  reader = await g.token('reader');
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(WAIT);
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.goto(`${base()}/review/`);
  await page.evaluate((t) => sessionStorage.setItem('gateway.review.token', t), reader);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await host?.stop();
  await g?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the review page tells the truth', () => {
  it('an execution whose coverage is unavailable reads "unknown" with why, never "0 files changed +0 −0", on its page and in the session table', async () => {
    const sessionID = await session('unknown changes');
    const root = kit.worktree({ 'a.txt': 'one\n' });
    const known = await kit.runExecution(sessionID, root, new WorktreeCapturer(), () => write(root, 'a.txt', 'two\n'));
    const e: any = await host.beginExecution(sessionID, 'PROMPT'); // no start snapshot: what it changed is unknown
    await host.appendText(sessionID, e.id, 'I edited a.txt.');
    await host.settleExecution(e.id, 'SUCCEEDED');

    await open(`#/execution/${e.id}`);
    await page.locator('[data-coverage="UNAVAILABLE"]').waitFor();
    const totals = page.locator('.changes-section .totals');
    expect(await totals.getAttribute('data-totals')).toBe('UNKNOWN');
    expect(await totals.innerText()).toMatch(/^Changed files unknown\s\(a boundary snapshot of the worktree was not captured: .+\)$/);
    expect(await page.locator('.changes-section').innerText()).not.toMatch(/\b0 files?\b|\+0|−0/);

    await open(`#/session/${sessionID}`);
    await row(known.id).waitFor();
    expect(await row(known.id).locator('td.changeset').innerText()).toBe('1 file +1 −1 coverage: complete');
    expect(await row(e.id).locator('td.changeset').innerText()).toBe('unknown (a boundary snapshot is missing or expired) coverage: unavailable');
    await row(e.id).locator('td.changeset a.changes-unknown').click();
    await page.locator('[data-totals="UNKNOWN"]').waitFor();
  });

  it('a prompt sent outside any execution shows on the execution that answered it, never on a later one that recorded nothing (the demo\'s #3)', async () => {
    const demo = await runDemo(['--url', g.url], () => {}, { GATEWAY_TOKEN: g.admin });
    await open(`#/session/${demo.sessionID}`);
    const third = page.locator('tr.execution-row[data-sequence="3"]');
    await third.waitFor();
    const thirdID = await third.getAttribute('data-execution');

    // #2 wrote no message, but ran the build: the prompt sent just before it is its own.
    await open(`#/execution/${demo.omittedID}`);
    await page.locator('ol.timeline li.tl-job').waitFor();
    expect(await page.locator('ol.timeline li.tl-prompt pre.text').allInnerTexts()).toEqual(['Now run the build (it fails on purpose).']);

    // #3 was interrupted having recorded nothing: no prompt is its own.
    await open(`#/execution/${thirdID}`);
    await page.locator('ol.timeline').waitFor();
    expect(await page.locator('ol.timeline li.tl-prompt').count()).toBe(0);
    expect(await page.locator('ol.timeline').innerText()).toBe('No messages or jobs were recorded for this execution.');
  });

  it('the file tree: its order is the stack\'s and j/k\'s (folders first); the filter hides non-matching files even in a matching folder', async () => {
    const sessionID = await session('tree order');
    const files: Record<string, string> = { 'README.md': 'r\n', 'src/app.ts': 'a\n', 'src/lib/util.ts': 'u\n', 'src/main.ts': 'm\n', 'docs/guide.md': 'g\n' };
    const root = kit.worktree(files);
    const e = await kit.runExecution(sessionID, root, new WorktreeCapturer(), () => {
      for (const [p, c] of Object.entries(files)) write(root, p, c + 'more\n');
    });
    await open(`#/execution/${e.id}`);
    await page.locator('.file-card').nth(4).waitFor();
    const tree = await page.locator('.file-tree .tree-file').evaluateAll((li) => li.map((x) => (x as HTMLElement).dataset.path));
    const stack = await page.locator('.file-card').evaluateAll((c) => c.map((x) => (x as HTMLElement).dataset.path));
    expect(tree).toEqual(['docs/guide.md', 'src/lib/util.ts', 'src/app.ts', 'src/main.ts', 'README.md']);
    expect(stack).toEqual(tree);
    const visited: string[] = [];
    for (let i = 0; i < tree.length; i++) {
      await page.keyboard.press('j');
      await page.locator(`.file-card[data-path="${tree[i]}"].focused`).waitFor();
      visited.push((await page.locator('.file-card.focused').getAttribute('data-path'))!);
    }
    expect(visited).toEqual(tree);

    // "util" matches one file of src/: the folder stays, its other files are hidden in the tree and the stack.
    await page.fill('.tree-filter', 'util');
    await page.locator('.file-tree .tree-file[data-path="src/app.ts"]').waitFor({ state: 'hidden' });
    const shown = async (sel: string) => (await Promise.all((await page.locator(sel).all()).map(async (l) => (await l.isVisible()) ? l.getAttribute('data-path') : null))).filter(Boolean);
    expect(await shown('.file-tree .tree-file')).toEqual(['src/lib/util.ts']);
    expect(await shown('.file-card')).toEqual(['src/lib/util.ts']);
    expect(await page.locator('.file-tree li.tree-dir > details > summary').evaluateAll((s) => s.filter((x) => (x as HTMLElement).offsetParent !== null).map((x) => (x as HTMLElement).innerText))).toEqual(['src/', 'lib/']);
  });

  it('a hunk header follows the context expanded around it, up to "@@ -1,40 +1,40 @@"', async () => {
    const sessionID = await session('hunk header');
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`);
    const root = kit.worktree({ 'long.txt': lines.join('\n') + '\n' });
    const e = await kit.runExecution(sessionID, root, new WorktreeCapturer(), () => {
      write(root, 'long.txt', lines.map((l, i) => (i === 36 ? 'line 37 changed' : l)).join('\n') + '\n');
    });
    await open(`#/execution/${e.id}`);
    const header = page.locator('.file-card[data-path="long.txt"] tr.gap-row[data-gap="0"] td.hunk-info');
    await header.waitFor();
    expect(await header.innerText()).toBe('@@ -34,7 +34,7 @@');
    await page.click('.file-card[data-path="long.txt"] tr.gap-row[data-gap="0"] button.expand-up');
    await page.locator('.file-card[data-path="long.txt"] td.num-new', { hasText: /^14$/ }).first().waitFor();
    expect(await header.innerText()).toBe('@@ -14,27 +14,27 @@');
    await page.click('.file-card[data-path="long.txt"] tr.gap-row[data-gap="0"] button.expand-up');
    await page.locator('.file-card[data-path="long.txt"] td.num-new', { hasText: /^1$/ }).first().waitFor();
    expect(await header.innerText()).toBe('@@ -1,40 +1,40 @@');
  });
});
