import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Kind, parse } from 'graphql';
import { DEFAULT_LIMITS, operationCost } from '../server/limits.js';
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { TestGateway } from './harness.js';
import { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { changesetKit, write } from './support/changeset-kit.js';
import { startReviewRig, type ReviewRig } from './support/review-rig.js';
import { PROJECT_DIR } from '../db/index.js';
import { until } from './support/until.js';
import { lapseLease } from './fixtures.js';
import { TEST_OUTPUT } from './support/browser.js';

/**
 * Review comments on the review page (issue 50), in Chromium: a "+" in the gutter of a line opens a composer under
 * it, the comment is stored with the quoted line and shown as a thread at that line; several lines, a file, the whole
 * changeset; resolve and reopen; the API's typed errors said plainly; two pages see each other's comments live; open
 * comments sent to the session's agent, answered by the execution they started, linked to its changeset of the file.
 * One browser for the file, a page (its own browser context) per reviewer.
 */
const WAIT = 30_000;
/** Screenshots of the flow: test-output/ (ignored by git); REVIEW_COMMENTS_SCREENSHOTS=docs/screenshots/review-comments renews the committed ones. */
const SHOTS = process.env.REVIEW_COMMENTS_SCREENSHOTS ? path.resolve(PROJECT_DIR, process.env.REVIEW_COMMENTS_SCREENSHOTS) : path.join(TEST_OUTPUT, 'review-comments');

let rig: ReviewRig;
let g: TestGateway;
let host: ReferenceHost;
/** A plugin token: the role that may write comments (a reader reads them). */
let plugin: string;
const dirs: string[] = [];
const pages: Page[] = [];
const kit = changesetKit(() => ({ g, host }), dirs);

const base = () => g.url.replace(/\/graphql$/, '');
const card = (p: string) => `.file-card[data-path="${p}"]`;
const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1} of the file`).join('\n') + '\n';

/** A reviewer's page (its own context: its own sessionStorage), signed in with `token`, at `hash`. */
async function reviewer(hash: string, token = plugin): Promise<Page> {
  const page = await rig.browser.newPage({ viewport: { width: 1400, height: 900 } });
  pages.push(page);
  page.setDefaultTimeout(WAIT);
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.goto(`${base()}/review/`);
  await page.evaluate((t) => sessionStorage.setItem('gateway.review.token', t), token);
  await page.goto(`${base()}/review/${hash}`);
  await drawn(page, hash);
  return page;
}

/**
 * An execution's page draws its timeline after its files, which moves them down: a click between Playwright's hit
 * check and the click itself would land beside its target, so the tests wait for it first.
 */
async function drawn(page: Page, hash: string) {
  if (/^#\/execution\/[^/]+(\/file\/.*)?$/.test(hash)) await page.locator('.timeline-section ol.timeline').waitFor();
}

async function session(title: string): Promise<string> {
  const r = await g.gql(`mutation($input: CreateSessionInput!) { createSession(input: $input) { __typename ... on Session { id } } }`,
    { input: { title, directory: '/w/review-comments' } });
  return r.data.createSession.id;
}

const COMMENT = `id state body author { tokenID role } anchor { kind executionID fromExecutionID path side line startLine quote } sentAt answeredBy { id sequence }`;

async function commentsOf(executionID: string): Promise<any[]> {
  const r = await g.gql(`query($id: ID!) { execution(id: $id) { changeset { comments { ${COMMENT} } } } }`, { id: executionID });
  expect(r.errors).toBeUndefined();
  return r.data.execution.changeset.comments;
}

/** An execution that edits line 7 of src/app.ts (20 lines) and deletes line 15. */
async function editedExecution(title: string) {
  const sessionID = await session(title);
  const root = kit.worktree({ 'src/app.ts': lines(20), 'README.md': '# app\n' });
  const e = await kit.runExecution(sessionID, root, new WorktreeCapturer(), () => {
    write(root, 'src/app.ts', lines(20).replace('line 7 of the file', 'line seven, edited').replace('line 15 of the file\n', ''));
  });
  return { sessionID, executionID: e.id, root };
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, name), fullPage: false });

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  rig = await startReviewRig(WAIT);
  ({ g, host } = rig);
  plugin = await g.token('plugin');
}, 180_000);

afterAll(async () => {
  for (const p of pages) await p.context().close().catch(() => {});
  await rig?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('commenting on the review page', () => {
  it('the "+" of a line opens a composer under it; the comment is stored with the quoted line and shown as a thread at that line', async () => {
    const { executionID } = await editedExecution('one line');
    const page = await reviewer(`#/execution/${executionID}`);
    const f = card('src/app.ts');
    await page.locator(`${f} table.diff`).waitFor();
    await page.locator('.review-comments .comment-counts', { hasText: '0 open · 0 resolved' }).waitFor();

    // The added line: its "+" (shown on hover) opens a composer right under its row.
    const row = page.locator(`${f} tr.ln`, { has: page.locator('td.num[data-line="R7"]') });
    await row.hover();
    await row.locator('button.add-comment[data-side="NEW"][data-line="7"]').click();
    const composer = page.locator(`${f} tr.comment-row form.comment-composer[data-line="7"]`);
    await composer.waitFor();
    expect(await composer.locator('.composer-label').innerText()).toBe('Commenting on line 7 (new)');
    await page.locator(`${f} tr.ln:has(td.num[data-line="R7"]) + tr.comment-row form.comment-composer[data-line="7"]`).waitFor();
    expect(await page.evaluate(() => document.activeElement?.classList.contains('comment-text'))).toBe(true);
    await composer.locator('textarea').fill('Call it "line 7" again:\nthe tests read it.');
    await shot(page, '1-composer-on-a-line.png');
    await composer.locator('button.comment-submit').click();

    const thread = page.locator(`${f} tr.comment-row .thread[data-line="7"]`);
    await thread.waitFor();
    await composer.waitFor({ state: 'detached' });
    expect(await thread.locator('.comment-body').innerText()).toBe('Call it "line 7" again:\nthe tests read it.');
    expect(await thread.locator('.thread-head').innerText()).toMatch(/plugin\s+commented just now.*open/s);
    // Right under the line's row.
    await page.locator(`${f} tr.ln:has(td.num[data-line="R7"]) + tr.comment-row .thread[data-line="7"]`).waitFor();
    await page.locator('.review-comments .comment-counts', { hasText: '1 open · 0 resolved' }).waitFor();

    // Stored by the API with the line as the changeset's patch shows it (the page sent no quote).
    const [c] = await commentsOf(executionID);
    expect(c).toMatchObject({
      state: 'OPEN', body: 'Call it "line 7" again:\nthe tests read it.', author: { role: 'plugin' },
      anchor: { kind: 'EXECUTION', executionID, fromExecutionID: null, path: 'src/app.ts', side: 'NEW', line: 7, startLine: null, quote: 'line seven, edited' },
    });
    expect(await thread.getAttribute('data-comment')).toBe(c.id);

    // The removed line is commented on its old side.
    const gone = page.locator(`${f} tr.ln`, { has: page.locator('td.num[data-line="L15"]') });
    await gone.hover();
    await gone.locator('button.add-comment[data-side="OLD"]').click();
    const oldComposer = page.locator(`${f} form.comment-composer[data-side="OLD"][data-line="15"]`);
    await oldComposer.locator('textarea').fill('Why was this removed?');
    await oldComposer.locator('button.comment-submit').click();
    await page.locator(`${f} .thread[data-side="OLD"][data-line="15"]`).waitFor();
    expect((await commentsOf(executionID)).map((x) => [x.anchor.side, x.anchor.line, x.anchor.quote]))
      .toEqual([['NEW', 7, 'line seven, edited'], ['OLD', 15, 'line 15 of the file']]);

    // The unified layout shows the same threads under the same lines.
    await page.click('.layout-toggle button[data-layout="unified"]');
    await page.locator(`${f} table.diff-unified tr.comment-row .thread[data-line="7"]`).waitFor();
    expect(await page.locator(`${f} table.diff-unified .thread`).count()).toBe(2);
    await page.click('.layout-toggle button[data-layout="split"]');
    await page.locator(`${f} table.diff-split .thread[data-line="7"]`).waitFor();
  });

  it('shift-click and drag comment on several lines; the lines are marked and quoted', async () => {
    const { executionID } = await editedExecution('several lines');
    const page = await reviewer(`#/execution/${executionID}`);
    const f = card('src/app.ts');
    await page.locator(`${f} table.diff`).waitFor();
    const plus = (side: string, n: number) => page.locator(`${f} button.add-comment[data-side="${side}"][data-line="${n}"]`);

    await plus('NEW', 5).click();
    await page.locator(`${f} form.comment-composer[data-line="5"] textarea`).fill('These three lines…');
    await plus('NEW', 7).click({ modifiers: ['Shift'] });
    const composer = page.locator(`${f} form.comment-composer[data-start-line="5"][data-line="7"]`);
    await composer.waitFor();
    expect(await page.locator(`${f} form.comment-composer`).count()).toBe(1);
    expect(await composer.locator('.composer-label').innerText()).toBe('Commenting on lines 5–7 (new)');
    expect(await composer.locator('textarea').inputValue()).toBe('These three lines…');
    expect(await page.locator(`${f} tr.comment-range`).count()).toBe(3);
    await composer.locator('button.comment-submit').click();
    const thread = page.locator(`${f} .thread[data-start-line="5"][data-line="7"]`);
    await thread.waitFor();
    expect(await thread.locator('.thread-where').innerText()).toBe('on lines 5–7 (new)');
    expect(await thread.locator('pre.comment-quote').innerText()).toBe('> line 5 of the file\n> line 6 of the file\n> line seven, edited');

    // A drag from one "+" to another line of the same side.
    await plus('NEW', 13).hover();
    await page.mouse.down();
    await page.locator(`${f} tr.ln`, { has: page.locator('td.num[data-line="R14"]') }).locator('td.code[data-side="new"]').hover();
    await page.mouse.up();
    const dragged = page.locator(`${f} form.comment-composer[data-start-line="13"][data-line="14"]`);
    await dragged.locator('textarea').fill('And these two.');
    await dragged.locator('button.comment-submit').click();
    await page.locator(`${f} .thread[data-start-line="13"][data-line="14"]`).waitFor();
    await page.locator(`${f} .thread[data-start-line="5"]`).scrollIntoViewIfNeeded();
    await shot(page, '2-several-lines.png');
    expect((await commentsOf(executionID)).map((x) => [x.anchor.startLine, x.anchor.line, x.anchor.quote]))
      .toEqual([[5, 7, 'line 5 of the file\nline 6 of the file\nline seven, edited'], [13, 14, 'line 13 of the file\nline 14 of the file']]);
  });

  it('a file comment and a changeset comment; resolve folds a thread, reopen unfolds it; a renamed file, a range and a drift take comments too', async () => {
    const { sessionID, executionID, root } = await editedExecution('file and changeset');
    const page = await reviewer(`#/execution/${executionID}`);
    const f = card('src/app.ts');
    await page.locator(`${f} table.diff`).waitFor();

    await page.click(`${f} button.comment-file`);
    const fileComposer = page.locator(`${f} .file-comments form.comment-composer`);
    expect(await fileComposer.locator('.composer-label').innerText()).toBe('Commenting on the whole file');
    await fileComposer.locator('textarea').fill('Is this file needed at all?');
    await fileComposer.locator('button.comment-submit').click();
    const fileThread = page.locator(`${f} .file-comments .thread`);
    await fileThread.waitFor();
    expect(await fileThread.locator('.comment-body').innerText()).toBe('Is this file needed at all?');

    const panel = page.locator('.review-comments');
    await panel.locator('textarea').fill('Overall: fine, two nits.');
    await panel.locator('button.comment-submit').click();
    await panel.locator('.changeset-threads .thread', { hasText: 'Overall: fine, two nits.' }).waitFor();
    expect(await panel.locator('textarea').inputValue()).toBe('');
    const stored = await commentsOf(executionID);
    expect(stored.map((c) => [c.anchor.path, c.anchor.side, c.anchor.line, c.anchor.quote, c.body])).toEqual([
      [null, null, null, null, 'Overall: fine, two nits.'],
      ['src/app.ts', null, null, null, 'Is this file needed at all?'],
    ]);

    // Resolve: the thread folds to one line; reopen: open again. Both as the API stores them.
    const id = await fileThread.getAttribute('data-comment');
    await fileThread.locator('button.resolve').click();
    const resolved = page.locator(`${f} details.thread-resolved[data-comment="${id}"]`);
    await resolved.waitFor();
    expect(await resolved.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    expect(await resolved.locator('summary').innerText()).toBe('resolved plugin: Is this file needed at all?');
    await panel.locator('.comment-counts', { hasText: '1 open · 1 resolved' }).waitFor();
    expect((await commentsOf(executionID)).find((c) => c.id === id).state).toBe('RESOLVED');
    await shot(page, '3-resolved-folded.png');
    await resolved.locator('summary').click();
    await resolved.locator('button.reopen').click();
    await page.locator(`${f} div.thread-open[data-comment="${id}"]`).waitFor();
    expect((await commentsOf(executionID)).find((c) => c.id === id).state).toBe('OPEN');

    // A renamed file's lines (its new path), a range's and a drift's.
    const cap = new WorktreeCapturer();
    const moved = await kit.runExecution(sessionID, root, cap, () => {
      rmSync(path.join(root, 'src/app.ts'));
      write(root, 'src/main.ts', lines(20).replace('line 7 of the file', 'line seven, edited').replace('line 15 of the file\n', '').replace('line 3 of', 'line three of'));
    });
    writeFileSync(path.join(root, 'README.md'), '# app, edited by hand\n'); // outside any execution
    const after = await kit.runExecution(sessionID, root, cap, () => {});
    for (const [hash, p, side, n, kind] of [
      [`#/execution/${moved.id}`, 'src/main.ts', 'NEW', 3, 'EXECUTION'],
      [`#/session/${sessionID}/changes/${executionID}/${moved.id}`, 'src/main.ts', 'NEW', 7, 'RANGE'],
      [`#/execution/${after.id}/drift`, 'README.md', 'OLD', 1, 'DRIFT'],
    ] as const) {
      await page.goto(`${base()}/review/${hash}`);
      await drawn(page, hash);
      await page.locator(`${card(p)} table.diff`).waitFor();
      await page.locator(`${card(p)} button.add-comment[data-side="${side}"][data-line="${n}"]`).click();
      const c = page.locator(`${card(p)} form.comment-composer[data-line="${n}"]`);
      await c.locator('textarea').fill(`On the ${kind.toLowerCase()}.`);
      await c.locator('button.comment-submit').click();
      await page.locator(`${card(p)} tr.comment-row .thread[data-line="${n}"]`, { hasText: `On the ${kind.toLowerCase()}.` }).waitFor();
    }
    const all = await g.gql(`query($id: ID!) { session(id: $id) { comments(first: 50) { edges { node { body anchor { kind executionID fromExecutionID path side line quote } } } } } }`, { id: sessionID });
    expect(all.errors).toBeUndefined();
    const byBody = Object.fromEntries(all.data.session.comments.edges.map((e: any) => [e.node.body, e.node.anchor]));
    expect(byBody['On the execution.']).toEqual({ kind: 'EXECUTION', executionID: moved.id, fromExecutionID: null, path: 'src/main.ts', side: 'NEW', line: 3, quote: 'line three of the file' });
    expect(byBody['On the range.']).toEqual({ kind: 'RANGE', executionID: moved.id, fromExecutionID: executionID, path: 'src/main.ts', side: 'NEW', line: 7, quote: 'line seven, edited' });
    expect(byBody['On the drift.']).toEqual({ kind: 'DRIFT', executionID: after.id, fromExecutionID: null, path: 'README.md', side: 'OLD', line: 1, quote: '# app' });
  });

  it('the API\'s typed errors are said plainly: an empty body, a line outside the patch, a reader\'s token', async () => {
    const { executionID } = await editedExecution('errors');
    const page = await reviewer(`#/execution/${executionID}`);
    const f = card('src/app.ts');
    await page.locator(`${f} table.diff`).waitFor();

    await page.locator(`${f} button.add-comment[data-side="NEW"][data-line="7"]`).click();
    const composer = page.locator(`${f} form.comment-composer[data-line="7"]`);
    await composer.locator('button.comment-submit').click();
    const error = composer.locator('.comment-error');
    await error.waitFor();
    expect(await error.getAttribute('data-error')).toBe('InvalidRequestError');
    expect(await error.innerText()).toMatch(/^The gateway refused the request\. InvalidRequestError: .*body/);
    await shot(page, '4-empty-body-refused.png');
    await composer.locator('button.comment-cancel').click();
    await composer.waitFor({ state: 'detached' });

    // Lines expanded from the file's text are not in the patch: they have no "+". A stale page that still offers one
    // (its button renumbered here) gets the gateway's CommentAnchorError, said under the line.
    await page.click(`${f} tr.gap-row[data-gap="0"] button.expand-up`);
    await page.locator(`${f} td.num[data-line="R2"]`).first().waitFor();
    expect(await page.locator(`${f} tr.ln`, { has: page.locator('td.num[data-line="R2"]') }).locator('button.add-comment').count()).toBe(0);
    await page.locator(`${f} button.add-comment[data-side="NEW"][data-line="7"]`).evaluate((b) => { (b as HTMLElement).dataset.line = '2'; });
    await page.locator(`${f} button.add-comment[data-side="NEW"][data-line="2"]`).click();
    const outside = page.locator(`${f} form.comment-composer[data-line="2"]`);
    await outside.locator('textarea').fill('Outside the patch.');
    await outside.locator('button.comment-submit').click();
    await outside.locator('.comment-error[data-error="CommentAnchorError"]').waitFor();
    expect(await outside.locator('.comment-error').innerText()).toMatch(/^The comment cannot be anchored there\. CommentAnchorError \(LINE_OUTSIDE_PATCH\): Line 2 of src\/app\.ts/);
    expect(await commentsOf(executionID)).toEqual([]);

    // A reader reads comments but may not write them.
    const reader = await reviewer(`#/execution/${executionID}`, rig.reader);
    await reader.locator(`${f} button.add-comment[data-side="NEW"][data-line="7"]`).click();
    const rc = reader.locator(`${f} form.comment-composer[data-line="7"]`);
    await rc.locator('textarea').fill('A reader tries.');
    await rc.locator('button.comment-submit').click();
    await rc.locator('.comment-error[data-error="FORBIDDEN"]').waitFor();
    expect(await rc.locator('.comment-error').innerText())
      .toBe('This token may not write review comments (a plugin or admin token may): The reader role may not use addReviewComment.');
    expect(await commentsOf(executionID)).toEqual([]);
  });

  it('two pages on one changeset see each other\'s comments, resolutions and reopenings live', async () => {
    const { executionID } = await editedExecution('live');
    const [a, b] = [await reviewer(`#/execution/${executionID}`), await reviewer(`#/execution/${executionID}`)];
    const f = card('src/app.ts');
    for (const p of [a, b]) {
      await p.locator(`${f} table.diff`).waitFor();
      await p.locator('#live[data-state="connected"]').waitFor();
    }
    await a.locator(`${f} button.add-comment[data-side="NEW"][data-line="7"]`).click();
    await a.locator(`${f} form.comment-composer textarea`).fill('Seen from the other page?');
    await a.locator(`${f} form.comment-composer button.comment-submit`).click();
    const onB = b.locator(`${f} tr.comment-row .thread[data-line="7"]`, { hasText: 'Seen from the other page?' });
    await onB.waitFor();
    await onB.locator('button.resolve').click();
    await a.locator(`${f} details.thread-resolved[data-line="7"]`).waitFor();
    await a.locator('.review-comments .comment-counts', { hasText: '0 open · 1 resolved' }).waitFor();
    await b.locator('.review-comments textarea').fill('From B, on the whole changeset.');
    await b.locator('.review-comments button.comment-submit').click();
    await a.locator('.review-comments .changeset-threads .thread', { hasText: 'From B, on the whole changeset.' }).waitFor();

    // A is typing under a line when B's comment on that line arrives: it shows above A's composer, and A's typing
    // goes on in the composer, its text whole.
    await a.locator(`${f} button.add-comment[data-side="NEW"][data-line="6"]`).click();
    await a.keyboard.type('Half of a ');
    await b.locator(`${f} button.add-comment[data-side="NEW"][data-line="6"]`).click();
    await b.locator(`${f} form.comment-composer[data-line="6"] textarea`).fill('B was quicker.');
    await b.locator(`${f} form.comment-composer[data-line="6"] button.comment-submit`).click();
    const cell = a.locator(`${f} tr.ln:has(td.num[data-line="R6"]) + tr.comment-row td.comment-cell[data-side="NEW"]`);
    await cell.locator('.thread', { hasText: 'B was quicker.' }).waitFor();
    await a.keyboard.type('sentence.');
    expect(await cell.locator('form.comment-composer textarea').inputValue()).toBe('Half of a sentence.');
    expect(await cell.evaluate((td) => [...td.children].map((x) => x.className))).toEqual(['thread thread-open', 'comment-composer']);
  });

  it('open comments are selected and sent to the agent; the execution they start answers them, its changeset of the file one click away; busy, sealed and a host that cannot prompt are said plainly', async () => {
    // A host that carries PROMPT out, over a real worktree: its turn edits the line the reviewer commented on.
    const root = kit.worktree({ 'src/app.ts': lines(20) });
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const agent = new ReferenceHost({
      url: g.url, token: await g.token('host'), leaseMs: 600_000, capabilities: { prompt: true }, worktree: root,
      onPrompt: async () => {
        write(root, 'src/app.ts', lines(20).replace('line 7 of the file', 'line 7, as the reviewer asked'));
        await gate;
        return { text: 'Line 7 reads as you asked.' };
      },
    });
    await agent.start();
    try {
      const agentKit = changesetKit(() => ({ g, host: agent }), dirs);
      const sessionID = await session('sent to the agent');
      const e1 = await agentKit.runExecution(sessionID, root, new WorktreeCapturer(), () => {
        write(root, 'src/app.ts', lines(20).replace('line 7 of the file', 'line seven, edited'));
      });
      const f = card('src/app.ts');
      const page = await reviewer(`#/execution/${e1.id}`);
      const watcher = await reviewer(`#/execution/${e1.id}`);
      await page.locator(`${f} table.diff`).waitFor();
      await watcher.locator('#live[data-state="connected"]').waitFor();

      await page.locator(`${f} button.add-comment[data-side="NEW"][data-line="7"]`).click();
      await page.locator(`${f} form.comment-composer textarea`).fill('Please call it "line 7" again.');
      await page.locator(`${f} form.comment-composer button.comment-submit`).click();
      const thread = page.locator(`${f} .thread[data-line="7"]`);
      await thread.waitFor();
      await page.click(`${f} button.comment-file`);
      await page.locator(`${f} .file-comments form.comment-composer textarea`).fill('Also: a header comment would help.');
      await page.locator(`${f} .file-comments form.comment-composer button.comment-submit`).click();
      const fileThread = page.locator(`${f} .file-comments .thread`);
      await fileThread.waitFor();

      const send = page.locator('.review-comments button.send-comments');
      expect(await send.innerText()).toBe('Send 0 comments to the agent');
      expect(await send.isDisabled()).toBe(true);
      await thread.locator('input.send-select').check();
      expect(await send.innerText()).toBe('Send 1 comment to the agent');
      await shot(page, '5-selected-to-send.png');
      await send.click();
      const status = page.locator('.review-comments .send-status.sent');
      await status.waitFor();
      const [e2] = await (async () => {
        const r = await g.gql(`query($id: ID!) { session(id: $id) { executions(first: 5) { edges { node { id sequence status } } } } }`, { id: sessionID });
        return r.data.session.executions.edges.map((x: any) => x.node).filter((x: any) => x.sequence === 2);
      })();
      expect(await status.innerText()).toBe('Sent 1 comment: execution #2 started to answer them.');
      expect(await status.locator('a').getAttribute('href')).toBe(`#/execution/${e2.id}`);
      // The prompt the agent got: the comment with its file, line and quoted line.
      expect(agent.prompts.at(-1)!.text).toBe('Review comments on your changes (1):\n\n1. src/app.ts, line 7 (new):\n   > line seven, edited\n   Please call it "line 7" again.\n');
      const answered = thread.locator('.answered');
      await answered.waitFor();
      expect(await answered.innerText()).toBe('✔ answered by execution #2');
      expect(await answered.locator('a').getAttribute('href')).toBe(`#/execution/${e2.id}/file/${encodeURIComponent('src/app.ts')}`);
      expect(await thread.locator('input.send-select').count()).toBe(0);
      // The other page saw the answer arrive.
      await watcher.locator(`${f} .thread[data-line="7"] .answered`, { hasText: 'answered by execution #2' }).waitFor();

      // While the agent's turn runs, another send is refused: busy.
      await fileThread.locator('input.send-select').check();
      await send.click();
      const error = page.locator('.review-comments .send-status.error-box');
      await error.waitFor();
      expect(await error.getAttribute('data-error')).toBe('SessionBusyError');
      expect(await error.innerText()).toMatch(/^The agent is busy: an execution of this session is running\. Send the comments when it has settled\. SessionBusyError: /);
      await shot(page, '6-send-refused-busy.png');

      release();
      await until('the answer settled', async () => (await g.gql(`query($id: ID!) { execution(id: $id) { status } }`, { id: e2.id })).data.execution.status === 'SUCCEEDED');
      // The refusal gives way once the execution settled.
      await page.locator('.review-comments .send-status', { hasText: 'The agent\'s execution has settled: the selected comments can be sent now.' }).waitFor();
      await page.locator(`${f} .thread[data-line="7"]`).evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await shot(page, '7-answered-by-execution.png');
      // One click: the answering execution's changeset of the file, with the line changed as asked.
      await answered.locator('a').click();
      await page.locator('h1', { hasText: 'Execution #2' }).waitFor();
      await page.locator(`${f}.focused table.diff`).waitFor();
      expect(await page.locator(`${f} td.code[data-kind="del"]`).allInnerTexts()).toEqual(['line seven, edited']);
      expect(await page.locator(`${f} td.code[data-kind="add"]`).allInnerTexts()).toEqual(['line 7, as the reviewer asked']);
      await shot(page, '8-the-answer-changeset.png');

      // The session page lists every comment of the session, each linked to its line on its changeset's page.
      await watcher.goto(`${base()}/review/#/session/${sessionID}`);
      const listed = watcher.locator('.session-comments li.session-comment');
      await listed.nth(1).waitFor();
      expect(await watcher.locator('.session-comments h2').innerText()).toBe('Review comments 2 open (1 not answered yet) · 0 resolved');
      expect(await listed.allInnerTexts()).toEqual([
        'open execution #1 · src/app.ts, line 7 (new) plugin just now: Please call it "line 7" again. · ✔ answered by execution #2',
        'open execution #1 · src/app.ts (whole file) plugin just now: Also: a header comment would help.',
      ]);
      await watcher.locator('.session-comments').evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await shot(watcher, '9-session-comments.png');
      await listed.first().locator('a').first().click();
      await watcher.locator(`${f} tr.target td.num[data-line="R7"]`).waitFor();
      await watcher.locator(`${f} tr.target + tr.comment-row .thread[data-line="7"]`).waitFor();

      // Sealed: nothing more is sent.
      const sealed = await g.gql(`mutation($input: SealSessionInput!) { sealSession(input: $input) { __typename } }`, { input: { sessionID } });
      expect(sealed.data.sealSession.__typename).toBe('SessionSealed');
      await page.goto(`${base()}/review/#/execution/${e1.id}`);
      await drawn(page, `#/execution/${e1.id}`);
      await page.locator(`${f} .file-comments .thread input.send-select`).check();
      await send.click();
      await error.waitFor();
      expect(await error.getAttribute('data-error')).toBe('SessionSealedError');
      expect(await error.innerText()).toMatch(/^The session is sealed: nothing more can be sent to its agent\. SessionSealedError: /);

      // Its host's lease lapsed: no host can carry a prompt out.
      const other = await session('host gone');
      const e3 = await agentKit.runExecution(other, root, new WorktreeCapturer(), () => write(root, 'notes.txt', 'n\n'));
      await page.goto(`${base()}/review/#/execution/${e3.id}`);
      await drawn(page, `#/execution/${e3.id}`);
      await page.locator('.review-comments textarea').fill('Anyone there?');
      await page.locator('.review-comments button.comment-submit').click();
      await page.locator('.review-comments .changeset-threads .thread input.send-select').check();
      await lapseLease(g.sql, agent.id!);
      await send.click();
      await page.locator('.review-comments .send-status.error-box[data-error="HostUnavailableError"]').waitFor();
      expect(await error.innerText()).toMatch(/^No host can carry the prompt out now \(none is connected for this session, its lease expired, or it failed to start\)\. HostUnavailableError \(LEASE_EXPIRED\): /);
    } finally {
      release();
      await agent.stop();
    }

    // A host that cannot take a prompt (the rig's reference host declares no PROMPT).
    const { executionID } = await editedExecution('no prompt');
    const page = await reviewer(`#/execution/${executionID}`);
    await page.locator('.review-comments textarea').fill('Send me.');
    await page.locator('.review-comments button.comment-submit').click();
    await page.locator('.review-comments .changeset-threads .thread input.send-select').check();
    await page.locator('.review-comments button.send-comments').click();
    const refused = page.locator('.review-comments .send-status.error-box');
    await refused.waitFor();
    expect(await refused.getAttribute('data-error')).toBe('UnsupportedError');
    expect(await refused.innerText()).toMatch(/^This session's host cannot take a prompt from the gateway \(it does not support PROMPT\)\. UnsupportedError \(PROMPT\): /);
    // Still open, still selectable: nothing was sent.
    expect((await commentsOf(executionID))[0]).toMatchObject({ state: 'OPEN', sentAt: null, answeredBy: null });
  });
});

describe("the page's comment documents", () => {
  const doc = parse(readFileSync(path.join(PROJECT_DIR, 'client', 'operations', 'ReviewPageComments.graphql'), 'utf8'));
  const operations = doc.definitions.flatMap((d) => (d.kind === Kind.OPERATION_DEFINITION && d.name ? [d.name.value] : []));
  it('each costs at most a tenth of the gateway\'s limit', () => {
    expect(operations).toHaveLength(9);
    for (const name of operations) expect(operationCost(doc, name, { first: 100 }), name).toBeLessThanOrEqual(DEFAULT_LIMITS.maxCost / 10);
  });
});
