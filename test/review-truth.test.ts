import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import type { TestGateway } from './harness.js';
import type { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { changesetKit, write } from './support/changeset-kit.js';
import { startReviewRig, type ReviewRig } from './support/review-rig.js';
import { runDemo } from '../host/demo.js';
import { begin, lapseLease, registerHost, settle } from './fixtures.js';
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { TEST_OUTPUT } from './support/browser.js';
import { PROJECT_DIR } from '../db/index.js';

/**
 * The review page says only what is true (issue 49), in Chromium: an unknown changeset is never a count of zero,
 * a prompt is shown only on the execution that answered it, a failed, interrupted or abandoned execution says why.
 */
const WAIT = 30_000;

let rig: ReviewRig;
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
  rig = await startReviewRig(WAIT);
  ({ g, host, reader, browser, page } = rig);
}, 180_000);

afterAll(async () => {
  await rig?.stop();
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

  it('a failed execution\'s page says it failed with its error and error name; an interrupted one says what interrupted it, in words', async () => {
    const sessionID = await session('why it stopped');
    const other = await registerHost(g);
    const failed = await begin(g, other, sessionID);
    await settle(g, other, failed.id, 'FAILED', { error: 'the build exited with 3', errorName: 'BuildError' });
    const outcome = page.locator('.outcome');

    await open(`#/execution/${failed.id}`);
    await page.locator('.outcome[data-outcome="FAILED"]').waitFor();
    expect(await outcome.innerText()).toBe('Failed.\nBuildError: the build exited with 3');
    // Under the execution's title, before the banners.
    expect(await page.locator('h1 + .outcome').count()).toBe(1);

    const said: Record<string, string> = {
      USER: 'Interrupted by the user.',
      SEAL: 'Interrupted by the seal: the session was sealed while it ran.',
      SUPERSEDED: 'Superseded by a new prompt: interrupted before it finished.',
      SHUTDOWN: 'Interrupted by its host shutting down.',
    };
    for (const [reason, words] of Object.entries(said)) {
      const e: any = await host.beginExecution(sessionID, 'PROMPT');
      await host.settleExecution(e.id, 'INTERRUPTED', { interruptReason: reason as 'USER' });
      await open(`#/execution/${e.id}`);
      await page.locator(`.outcome[data-outcome="INTERRUPTED"][data-reason="${reason}"]`).waitFor();
      expect(await outcome.innerText()).toBe(words);
    }

    // Its host stopped renewing its lease: the gateway marked it ABANDONED.
    const lost = await registerHost(g);
    const orphan = await begin(g, lost, await session('abandoned'));
    await lapseLease(g.sql, lost.hostID);
    await expect.poll(async () => (await g.gql(`query($id: ID!) { execution(id: $id) { status } }`, { id: orphan.id })).data.execution.status, { timeout: 10_000 }).toBe('ABANDONED');
    await open(`#/execution/${orphan.id}`);
    await page.locator('.outcome[data-outcome="ABANDONED"]').waitFor();
    expect(await outcome.innerText()).toBe('Abandoned: its host was lost (its lease lapsed) before the execution settled.');

    // A succeeded execution says nothing of the kind.
    const ok: any = await host.beginExecution(sessionID, 'PROMPT');
    await host.settleExecution(ok.id, 'SUCCEEDED');
    await open(`#/execution/${ok.id}`);
    await page.locator('ol.timeline').waitFor();
    expect(await outcome.count()).toBe(0);
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

  it('each route has its own title; the favicon is the page\'s own (no 404 on load); the live badge says what it means; dates are relative with the absolute one on hover', async () => {
    const sessionID = await session('titled session');
    const root = kit.worktree({ 'a.txt': 'one\n' });
    const e = await kit.runExecution(sessionID, root, new WorktreeCapturer(), () => write(root, 'a.txt', 'two\n'));
    const failures: string[] = [];
    const onResponse = (r: any) => { if (r.status() >= 400) failures.push(`${r.status()} ${r.url()}`); };
    page.on('response', onResponse);
    try {
      await open('#/');
      await page.locator('h1', { hasText: 'Sessions' }).waitFor();
      expect(await page.title()).toBe('Sessions · Review');
      const icon = await page.locator('link[rel="icon"]').getAttribute('href');
      expect(icon).toMatch(/^\/review\/assets\/favicon-[\w-]+\.svg$/);
      const res = await fetch(`${base()}${icon}`);
      expect([res.status, res.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);

      await open(`#/session/${sessionID}`);
      await row(e.id).waitFor();
      await page.waitForFunction(() => document.title === 'titled session · Session · Review');
      const created = page.locator('.session-head dd time');
      expect(await created.innerText()).toMatch(/^(just now|\d+ seconds? ago|\d+ minutes? ago)$/);
      expect(await created.getAttribute('title')).toBe(await created.evaluate((t) => new Date(t.getAttribute('datetime')!).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' })));
      await page.locator('#live[data-state="connected"]').waitFor();
      expect(await page.locator('#live').getAttribute('title')).toContain('Executions that settle and changes to the session');

      await open(`#/execution/${e.id}`);
      await page.waitForFunction(() => document.title === 'Execution #1 · titled session · Review');
      await open(`#/execution/${e.id}/drift`);
      await page.locator('h1', { hasText: 'Changed outside any execution before #1' }).waitFor();
      expect(await page.title()).toBe('Drift before #1 · titled session · Review');
      await open(`#/session/${sessionID}/changes/${e.id}/${e.id}`);
      await page.locator('h1.range-title').waitFor();
      expect(await page.title()).toBe('Changes #1 to #1 · titled session · Review');
    } finally {
      page.off('response', onResponse);
    }
    expect(failures).toEqual([]);
  });

  it('a link opened in a new tab is handed the token by an open tab (never through the URL or localStorage); signing out signs out every tab', async () => {
    const sessionID = await session('new tab');
    const context = await browser.newContext();
    try {
      const first = await context.newPage();
      await first.goto(`${base()}/review/`);
      await first.fill('#token', reader);
      await first.click('form.sign-in button[type=submit]');
      await first.locator('h1', { hasText: 'Sessions' }).waitFor();

      const tab = await context.newPage();
      await tab.goto(`${base()}/review/#/session/${sessionID}`);
      await tab.locator('.session-head h1', { hasText: 'new tab' }).waitFor();
      expect(await tab.evaluate(() => sessionStorage.getItem('gateway.review.token'))).toBe(reader);
      expect(await tab.evaluate(() => JSON.stringify(localStorage))).not.toContain(reader);
      expect(tab.url()).not.toContain(reader);

      await first.click('#signout');
      await first.locator('form.sign-in').waitFor();
      await tab.locator('form.sign-in', { hasText: 'Signed out in another tab.' }).waitFor();
      expect(await tab.evaluate(() => sessionStorage.getItem('gateway.review.token'))).toBeNull();
      // Nobody holds a token now: a new tab asks for one, and is not handed any.
      const third = await context.newPage();
      await third.goto(`${base()}/review/#/session/${sessionID}`);
      await third.locator('form.sign-in').waitFor();
      expect(await third.evaluate(() => sessionStorage.getItem('gateway.review.token'))).toBeNull();
    } finally {
      await context.close();
    }
  });

  it('marks the words that changed within an edited line ("hello, world" → "hello, world!"), also in highlighted code; lines too different are not marked', async () => {
    const sessionID = await session('word diff');
    const root = kit.worktree({ 'greeting.txt': 'hello, world\nkeep\nsomething else entirely\n', 'src/app.ts': 'export const answer: number = 41;\n' });
    const e = await kit.runExecution(sessionID, root, new WorktreeCapturer(), () => {
      write(root, 'greeting.txt', 'hello, world!\nkeep\nzzz qqq\n');
      write(root, 'src/app.ts', 'export const answer: number = 42;\n');
    });
    await open(`#/execution/${e.id}`);
    const marks = async (path: string, kind: 'add' | 'del') => page.locator(`.file-card[data-path="${path}"] td.code[data-kind="${kind}"]`)
      .evaluateAll((tds, k) => tds.map((td) => [...td.querySelectorAll(`mark.word-${k}`)].map((m) => m.textContent)), kind);
    for (const layout of ['split', 'unified']) {
      await page.click(`.layout-toggle button[data-layout="${layout}"]`);
      await page.locator(`.file-card[data-path="greeting.txt"] table.diff-${layout}`).waitFor();
      await page.locator(`.file-card[data-path="src/app.ts"] table.diff-${layout} .hljs-number`).first().waitFor();
      expect(await marks('greeting.txt', 'del')).toEqual([[], []]);
      expect(await marks('greeting.txt', 'add')).toEqual([['!'], []]); // "zzz qqq" is another line, not "something else" edited
      expect(await marks('src/app.ts', 'del')).toEqual([['41']]);
      expect(await marks('src/app.ts', 'add')).toEqual([['42']]);
      // The mark sits inside highlight.js's number, the line's text unchanged.
      expect(await page.locator('.file-card[data-path="src/app.ts"] td.code[data-kind="add"] .hljs-number mark.word-add').count()).toBe(1);
      expect(await page.locator('.file-card[data-path="src/app.ts"] td.code[data-kind="add"]').innerText()).toBe('export const answer: number = 42;');
    }
    await page.click('.layout-toggle button[data-layout="split"]');
  });

  it('line permalinks: a line number links to its line (?line=R12), which a link opened later scrolls to and marks, expanding the context it lies in', async () => {
    const sessionID = await session('permalinks');
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`);
    const root = kit.worktree({ 'long.txt': lines.join('\n') + '\n', 'other.txt': 'x\n' });
    const e = await kit.runExecution(sessionID, root, new WorktreeCapturer(), () => {
      write(root, 'long.txt', lines.map((l, i) => (i === 36 ? 'line 37 changed' : l)).join('\n') + '\n');
      write(root, 'other.txt', 'y\n');
    });
    const target = (path: string) => page.locator(`.file-card[data-path="${path}"] tr.target`);
    const inView = async (path: string) => {
      const box = (await target(path).boundingBox())!;
      return box.y >= 0 && box.y + box.height <= 900;
    };

    // A click on a number: the URL names the line, the line is marked.
    await open(`#/execution/${e.id}`);
    await page.locator('.file-card[data-path="long.txt"] td.num[data-line="R38"]').click();
    expect(decodeURIComponent(page.url())).toMatch(new RegExp(`#/execution/${e.id}/file/long\\.txt\\?line=R38$`));
    expect(await target('long.txt').locator('td.num[data-line="R38"]').count()).toBe(1);

    // Opened later (another tab, a reload): scrolled to and marked; the old side's number too.
    const link = page.url();
    await open('#/');
    await page.goto(link);
    await target('long.txt').locator('td.num[data-line="R38"]').waitFor();
    expect(await inView('long.txt')).toBe(true);
    await open(`#/execution/${e.id}/file/long.txt?line=L37`);
    await target('long.txt').locator('td.num[data-line="L37"]').waitFor();
    expect(await target('long.txt').locator('td.code[data-kind="del"]').innerText()).toBe('line 37');

    // A line the diff does not show: the unchanged stretch around it is expanded from the stored file.
    await open(`#/execution/${e.id}/file/long.txt?line=R10`);
    await target('long.txt').locator('td.num[data-line="R10"]').waitFor();
    expect(await target('long.txt').locator('td.code[data-side="new"]').innerText()).toBe('line 10');
    expect(await inView('long.txt')).toBe(true);
    // Following the link to another line of the open page moves the mark.
    await page.evaluate((id) => { location.hash = `#/execution/${id}/file/other.txt?line=R1`; }, e.id);
    await target('other.txt').waitFor();
    expect(await target('long.txt').count()).toBe(0);
  });

  it('a file\'s header: view the whole file as the execution left it (a deleted one as it was), copy its path; hide whitespace changes', async () => {
    const sessionID = await session('file actions');
    const root = kit.worktree({ 'src/deep/name.ts': 'export const a = 1;\nexport const b = 2;\n', 'gone.txt': 'was here\n', 'ws.ts': 'a();\n  b();\n' });
    const e = await kit.runExecution(sessionID, root, new WorktreeCapturer(), () => {
      write(root, 'src/deep/name.ts', 'export const a = 1;\nexport const b = 3;\n');
      rmSync(`${root}/gone.txt`);
      write(root, 'ws.ts', 'a();\n    b();\nc();\n');
    });
    await open(`#/execution/${e.id}`);
    const name = '.file-card[data-path="src/deep/name.ts"]';
    await page.locator(`${name} table.diff`).waitFor();
    await page.click(`${name} button.view-file`);
    await page.locator(`${name} .file-view table.file-text`).waitFor();
    expect(await page.locator(`${name} .file-view td.code`).allInnerTexts()).toEqual(['export const a = 1;', 'export const b = 3;']);
    expect(await page.locator(`${name} .file-diff`).isHidden()).toBe(true);
    await page.click(`${name} button.view-file`);
    await page.locator(`${name} .file-diff table.diff`).waitFor({ state: 'visible' });
    expect(await page.locator(`${name} .file-view`).isHidden()).toBe(true);
    const gone = '.file-card[data-path="gone.txt"]';
    await page.click(`${gone} button.view-file`);
    await page.locator(`${gone} .file-view table.file-text`).waitFor();
    expect(await page.locator(`${gone} .file-view`).innerText()).toContain('The file as it was before it was deleted.');
    expect(await page.locator(`${gone} .file-view td.code`).allInnerTexts()).toEqual(['was here']);

    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base() });
    await page.click(`${name} button.copy-path`);
    await page.locator(`${name} button.copy-path`, { hasText: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('src/deep/name.ts');

    const ws = '.file-card[data-path="ws.ts"]';
    const kinds = () => page.locator(`${ws} td.code[data-side="new"], ${ws} td.code[data-side="old"]`).evaluateAll((tds) => tds.map((td) => `${(td as HTMLElement).dataset.kind} ${(td as HTMLElement).innerText}`));
    await page.locator(`${ws} table.diff`).waitFor();
    expect(await kinds()).toEqual(['ctx a();', 'ctx a();', 'del   b();', 'add     b();', 'empty ', 'add c();']);
    await page.check('.hide-whitespace');
    expect(await kinds()).toEqual(['ctx a();', 'ctx a();', 'ctx     b();', 'ctx     b();', 'empty ', 'add c();']);
    await page.reload(); // the choice is kept
    await page.locator(`${ws} table.diff`).waitFor();
    expect(await kinds()).toEqual(['ctx a();', 'ctx a();', 'ctx     b();', 'ctx     b();', 'empty ', 'add c();']);
    await page.uncheck('.hide-whitespace');
    expect(await kinds()).toEqual(['ctx a();', 'ctx a();', 'del   b();', 'add     b();', 'empty ', 'add c();']);
  });

  it('who changed each line: a range marks each file and line with its execution or "outside edit", its banner names the omission, and a file\'s blame view says who last changed each line', async () => {
    // Screenshots: test-output/ (ignored by git); REVIEW_ATTRIBUTION_SCREENSHOTS=docs/screenshots/attribution renews the committed ones.
    const shots = process.env.REVIEW_ATTRIBUTION_SCREENSHOTS ? path.resolve(PROJECT_DIR, process.env.REVIEW_ATTRIBUTION_SCREENSHOTS) : path.join(TEST_OUTPUT, 'attribution');
    mkdirSync(shots, { recursive: true });
    const demo = await runDemo(['--url', g.url], () => {}, { GATEWAY_TOKEN: g.admin });
    const card = (p: string) => `.file-card[data-path="${p}"]`;
    const marks = (sel: string) => page.locator(sel).evaluateAll((els) => els.map((x) => (x as HTMLElement).dataset.origin));

    // The range #1 to #2 of the demo: the user's README.md edit next to the agent's files, now told apart.
    await open(`#/session/${demo.sessionID}/changes/${demo.changedID}/${demo.omittedID}`);
    await page.locator(`${card('greeting.txt')} .file-origins .origin-mark`).first().waitFor();
    expect(await marks(`${card('README.md')} .file-head .origin-mark`)).toEqual(['outside edit']);
    expect(await marks(`${card('greeting.txt')} .file-head .origin-mark`)).toEqual(['#1', '#2']);
    expect(await marks(`${card('notes.md')} .file-head .origin-mark`)).toEqual(['#1']);
    expect(await page.locator(`${card('greeting.txt')} .file-head a.origin-mark[data-origin="#2"]`).getAttribute('href')).toBe(`#/execution/${demo.omittedID}`);
    expect(await page.locator(`${card('README.md')} .file-head a.origin-mark`).getAttribute('href')).toBe(`#/execution/${demo.omittedID}/drift`);
    // A mark says the prompt its execution answered (and its agent and model, where the host reported them).
    await page.locator(`${card('greeting.txt')} .file-head a.origin-mark[data-origin="#2"][title*="answering"]`).waitFor();
    expect(await page.locator(`${card('greeting.txt')} .file-head a.origin-mark[data-origin="#2"]`).getAttribute('title'))
      .toMatch(/^Changed by execution #2 \(.*FAILED\), answering: Now run the build \(it fails on purpose\)\.$/);
    // Each line: the "hello" #1 replaced, the line #2 wrote; the user's line.
    await page.locator(`${card('greeting.txt')} td.code .origin-mark`).first().waitFor();
    expect(await marks(`${card('greeting.txt')} td.code[data-kind="del"] .origin-mark`)).toEqual(['#1']);
    expect(await marks(`${card('greeting.txt')} td.code[data-kind="add"] .origin-mark`)).toEqual(['#2']);
    expect(await page.locator(`${card('greeting.txt')} td.code[data-kind="add"]`).allInnerTexts()).toEqual(['hello, world!']); // the mark is not the line's text
    await page.locator(`${card('README.md')} td.code .origin-mark`).first().waitFor();
    expect(await marks(`${card('README.md')} td.code[data-kind="add"] .origin-mark`)).toEqual(['outside edit']);
    expect(await marks(`${card('notes.md')} td.code[data-kind="add"] .origin-mark`)).toEqual(['#1', '#1', '#1']);
    // The banner names why #2's own changeset is incomplete (its ignored build.log), not that #2 failed.
    const note = await page.locator('.incomplete-note').innerText();
    expect(note).toContain('#2 build.log ignored');
    expect(note).not.toContain('FAILED');
    await page.locator(card('README.md')).scrollIntoViewIfNeeded();
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(shots, 'range-with-attribution.png'), fullPage: true });

    // Blame, from the file's card: README.md at the end of #2, each line with what last changed it.
    await page.click(`${card('README.md')} a.blame-link`);
    await page.locator('table.blame').waitFor();
    expect(decodeURIComponent(page.url())).toContain(`#/session/${demo.sessionID}/blame/${demo.omittedID}/END/README.md`);
    const owners = await page.locator('table.blame tbody tr td.origin').evaluateAll((tds) => tds.map((td) => (td as HTMLElement).dataset.kind));
    expect(owners).toEqual(['before', 'before', 'before', 'outside']);
    expect(await marks('table.blame td.origin.run-start .origin-mark')).toEqual(['before the session', 'outside edit']);
    expect(await page.locator('table.blame td.code').allInnerTexts()).toEqual(['# Demo worktree', '', 'The reference host edits greeting.txt here.', 'The user added this line between two executions.']);
    expect(await marks('.blame-history .origin-mark')).toEqual(['before the session', 'outside edit']);
    await page.screenshot({ path: path.join(shots, 'blame-readme.png'), fullPage: true });
    // greeting.txt: #2's line, with the prompt it answered; at the start of #2 the line is #1's.
    await open(`#/session/${demo.sessionID}/blame/${demo.omittedID}/END/greeting.txt`);
    await page.locator('table.blame td.origin .origin-prompt').waitFor();
    expect(await marks('table.blame td.origin .origin-mark')).toEqual(['#2']);
    expect(await page.locator('table.blame td.origin .origin-prompt').innerText()).toBe('Now run the build (it fails on purpose).');
    await page.screenshot({ path: path.join(shots, 'blame-greeting.png'), fullPage: false });
    await page.click('.blame-where a:has-text("at its start")');
    await page.locator('table.blame td.origin .origin-mark[data-origin="#1"]').waitFor();
    // An ignored file has no blame, and says why.
    await open(`#/session/${demo.sessionID}/blame/${demo.omittedID}/END/build.log`);
    expect(await page.locator('.blame-unavailable').innerText()).toContain('OMITTED (IGNORED)');
    // On a phone: the blame's origin column narrows, the page does not scroll sideways.
    await page.setViewportSize({ width: 400, height: 800 });
    try {
      await open(`#/session/${demo.sessionID}/blame/${demo.omittedID}/END/README.md`);
      await page.locator('table.blame').waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    } finally {
      await page.setViewportSize({ width: 1400, height: 900 });
    }
  });
});
