import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from './harness.js';
import { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { changesetKit, write } from './support/changeset-kit.js';
import { setPolicy } from '../domain/snapshots.js';
import { PROJECT_DIR } from '../db/index.js';
import { ensureReviewBuilt } from '../server/review.js';
import { createToken } from '../domain/tokens.js';
import { BeginExecutionDocument, GatewayClient, SettleExecutionDocument } from '../client/index.js';

/**
 * The review page in a real browser (Debian's chromium through playwright-core) against a gateway
 * with real data made by the reference host: the canonical E1/E2 case, an execution with every kind
 * of omission, an unavailable boundary, a sealed session, a 500-file changeset, live settlements.
 */
const SHOTS = process.env.REVIEW_SCREENSHOTS ?? path.join(PROJECT_DIR, '.data', 'review-screenshots');
const WAIT = 30_000;

let g: TestGateway;
let host: ReferenceHost;
let browser: Browser;
let page: Page;
let reader: string;
const dirs: string[] = [];
const shots: string[] = [];
const kit = changesetKit(() => ({ g, host }), dirs);

async function shot(name: string) {
  const file = path.join(SHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  shots.push(file);
  console.log(`screenshot: ${file}`);
}

async function session(title: string, directory = '/w/review'): Promise<string> {
  const r = await g.gql(`mutation($input: CreateSessionInput!) { createSession(input: $input) { __typename ... on Session { id } } }`,
    { input: { title, directory } });
  return r.data.createSession.id;
}

const base = () => g.url.replace(/\/graphql$/, '');
async function open(hash: string) {
  await page.goto(`${base()}/review/${hash}`);
}
const text = (sel: string) => page.locator(sel).allInnerTexts();

beforeAll(async () => {
  rmSync(SHOTS, { recursive: true, force: true });
  mkdirSync(SHOTS, { recursive: true });
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
  // Signed in as a reader for every test (the first one clears this and signs in through the form).
  await page.goto(`${base()}/review/`);
  await page.evaluate((t) => sessionStorage.setItem('gateway.review.token', t), reader);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await host?.stop();
  await g?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  if (shots.length) console.log(`review screenshots (${shots.length}):\n${shots.join('\n')}`);
});

describe('the review page', () => {
  it('is served at /review with its bundled assets only, and asks for a token kept in sessionStorage', async () => {
    const res = await fetch(`${base()}/review`, { redirect: 'manual' });
    expect([res.status, res.headers.get('location')]).toEqual([302, '/review/']);
    const html = await (await fetch(`${base()}/review/`)).text();
    expect(html).toContain('/review/assets/');
    expect(html).not.toMatch(/https?:\/\//); // nothing from the internet
    const page0 = await fetch(`${base()}/review/`);
    expect(page0.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page0.headers.get('cache-control')).toBe('no-cache');
    const asset = /\/review\/(assets\/[^"]+\.js)/.exec(html)![1];
    const js = await fetch(`${base()}/review/${asset}`);
    expect([js.status, js.headers.get('content-type'), js.headers.get('cache-control')]).toEqual([200, 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable']);
    expect((await fetch(`${base()}/review/`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${base()}/review/nope.js`)).status).toBe(404);
    expect((await fetch(`${base()}/review/../package.json`)).status).toBe(404);
    expect((await fetch(`${base()}/review/assets/..%2F..%2Fpackage.json`)).status).toBe(404);

    await page.evaluate(() => sessionStorage.clear());
    const external: string[] = [];
    page.on('request', (r) => { if (!r.url().startsWith(base())) external.push(r.url()); });
    await open('');
    await page.locator('form.sign-in').waitFor();
    await page.fill('#token', 'gw_not_a_token');
    await page.click('form.sign-in button[type=submit]');
    await page.getByText('The gateway refused this token').waitFor();
    await shot('01-sign-in-refused');
    await page.fill('#token', reader);
    await page.click('form.sign-in button[type=submit]');
    await page.locator('h1', { hasText: 'Sessions' }).waitFor();
    expect(page.url()).not.toContain(reader);
    expect(await page.evaluate(() => sessionStorage.getItem('gateway.review.token'))).toBe(reader);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect(external).toEqual([]);
  });

  it('canonical case: E1 shows exactly its own edit of a.txt after E2 edited it again; messages with corrections and retractions, jobs', async () => {
    const sessionID = await session('canonical E1/E2');
    const root = kit.worktree({ 'a.txt': 'one\n', 'keep.txt': 'same\n' });
    const cap = new WorktreeCapturer();
    const s0 = await cap.snapshot(host.client, sessionID, root, host.id);
    const e1: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: s0.id });
    await host.appendText(sessionID, e1.id, 'Please change a.txt to two.', 'PROMPT');
    const said: any = await host.appendText(sessionID, e1.id, 'I changed a.txt to tow.');
    const wrong: any = await host.appendText(sessionID, e1.id, 'The tests pass (they did not run).');
    const job = await host.runJob(sessionID, e1.id, 'echo checking');
    await job.done;
    write(root, 'a.txt', 'two\n');
    const s1 = await cap.snapshot(host.client, sessionID, root, host.id);
    await host.settleExecution(e1.id, 'SUCCEEDED', { endSnapshot: s1.id });
    const e2: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: s1.id });
    write(root, 'a.txt', 'three\n');
    const s2 = await cap.snapshot(host.client, sessionID, root, host.id);
    await host.client.call(SettleExecutionDocument, { input: {
      executionID: e2.id, status: 'SUCCEEDED', endSnapshot: s2.id,
      usage: { inputTokens: 1234, outputTokens: 56, cacheReadTokens: 7, cost: 0.0125 }, model: { providerID: 'local', modelID: 'scripted' },
    } });
    const fix = await g.gql(`mutation($input: CorrectMessagePartInput!) { correctMessagePart(input: $input) { __typename } }`,
      { input: { messageID: said.id, partID: said.parts[0].id, text: 'I changed a.txt to two.' } });
    expect(fix.data.correctMessagePart.__typename).toBe('MessagePartCorrected');
    const gone = await g.gql(`mutation($input: RetractMessageInput!) { retractMessage(input: $input) { __typename } }`,
      { input: { messageID: wrong.id, reason: 'stale claim' } });
    expect(gone.data.retractMessage.__typename).toBe('MessageRetracted');

    // The sessions list links to the session; the session lists E2 then E1 with continuity badges.
    await open('');
    await page.locator(`[data-session="${sessionID}"]`).waitFor();
    expect(await page.locator(`[data-session="${sessionID}"] .session-status`).innerText()).toBe('IDLE');
    expect(await page.locator(`[data-session="${sessionID}"] .last-settled`).innerText()).toContain('#2');
    await shot('02-sessions');
    await page.click(`[data-session="${sessionID}"] a[href="#/session/${sessionID}"]`);
    await page.locator('tr.execution-row').nth(1).waitFor();
    expect(await page.locator('tr.execution-row').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.sequence))).toEqual(['2', '1']);
    await page.locator(`tr[data-execution="${e1.id}"] .continuity .badge`).waitFor();
    await page.locator(`tr[data-execution="${e2.id}"] .continuity .badge`).waitFor();
    expect(await page.locator(`tr[data-execution="${e1.id}"] .continuity`).innerText()).toBe('broken: LATER_EXECUTION by #2');
    expect(await page.locator(`tr[data-execution="${e2.id}"] .continuity`).innerText()).toBe('continuous');
    expect(await page.locator(`tr[data-execution="${e1.id}"] .usage`).innerText()).toBe('not reported');
    expect(await page.locator(`tr[data-execution="${e2.id}"] .usage .tokens`).innerText()).toBe('1,234 in · 56 out · 7 cache read');
    expect(await page.locator(`tr[data-execution="${e2.id}"] .usage .cost`).innerText()).toBe('$0.0125');
    expect(await page.locator(`tr[data-execution="${e2.id}"] .usage .model`).innerText()).toBe('local/scripted');
    // Messages: the correction and the retraction are marked; the retracted text is not shown.
    await page.locator(`[data-message="${said.id}"]`).waitFor();
    expect(await page.locator(`[data-message="${said.id}"]`).innerText()).toContain('corrected · rev 2');
    expect(await page.locator(`[data-message="${said.id}"] pre.text`).innerText()).toBe('I changed a.txt to two.');
    const retracted = await page.locator(`[data-message="${wrong.id}"]`).innerText();
    expect(retracted).toContain('retracted');
    expect(retracted).toContain('stale claim');
    expect(retracted).not.toContain('The tests pass');
    await page.locator(`tr[data-job="${job.id}"]`).waitFor();
    expect(await page.locator(`tr[data-job="${job.id}"]`).innerText()).toContain('COMPLETED');
    await shot('03-session-canonical');

    // E1's changeset: exactly one -one +two, side by side and inline, with line numbers.
    await page.click(`tr[data-execution="${e1.id}"] a[href="#/execution/${e1.id}"] >> nth=0`);
    await page.locator('[data-coverage="COMPLETE"]').waitFor();
    expect(await page.locator('.coverage').innerText()).toContain('Coverage complete');
    expect(await text('ol.files li .file-path')).toEqual(['a.txt']);
    await page.locator('.diff-pane .d2h-file-wrapper').waitFor();
    expect(await text('.diff-pane .d2h-del .d2h-code-line-ctn')).toEqual(['one']);
    expect(await text('.diff-pane .d2h-ins .d2h-code-line-ctn')).toEqual(['two']);
    expect(await page.locator('.diff-pane .d2h-files-diff').count()).toBe(1); // side by side
    const boundary = await page.locator('.boundary').innerText();
    expect(boundary).toContain(s0.id);
    expect(boundary).toContain(s1.id);
    await shot('04-changeset-e1-side-by-side');
    await page.click('.layout-toggle button[data-layout="line-by-line"]');
    await page.locator('.diff-pane .d2h-file-diff').waitFor();
    expect(await page.locator('.diff-pane .d2h-files-diff').count()).toBe(0);
    expect(await text('.diff-pane .d2h-code-linenumber.d2h-del')).toHaveLength(1);
    expect((await text('.diff-pane .d2h-del .d2h-code-line-ctn'))).toEqual(['one']);
    await shot('05-changeset-e1-inline');
    await page.click('.layout-toggle button[data-layout="side-by-side"]');

    // E2 through its deep link: two -> three.
    await open(`#/execution/${e2.id}/file/a.txt`);
    await page.locator('.diff-pane[data-path="a.txt"] .d2h-file-wrapper').waitFor();
    expect(await text('.diff-pane .d2h-del .d2h-code-line-ctn')).toEqual(['two']);
    expect(await text('.diff-pane .d2h-ins .d2h-code-line-ctn')).toEqual(['three']);
  });

  it('an execution with every kind of omission: the banner lists each path, reason and detail; files are marked', async () => {
    await setPolicy(g.sql, { filePatchBytes: 1_000 });
    try {
      const sessionID = await session('every omission');
      const files: Record<string, string | Buffer> = {
        '.gitignore': '*.log\nnode_modules/\n',
        'changed.log': 'a', 'node_modules/pkg/index.js': 'module.exports = 1;\n',
        'big.txt': 'x'.repeat(2_000), 'img.bin': Buffer.from([0, 1, 2, 3]), 'long.txt': 'l\n'.repeat(10),
        'src/app.ts': 'export const answer: number = 41;\n',
      };
      for (let i = 0; i < 6; i++) files[`zz/f${i}.txt`] = `${i}\n`;
      const root = kit.worktree(files);
      const cap = new WorktreeCapturer({ maxFileBytes: 1_500, maxFiles: 9 });
      const e = await kit.runExecution(sessionID, root, cap, async () => {
        await new Promise((r) => setTimeout(r, 20)); // distinct mtimes for the rewritten ignored file
        write(root, 'changed.log', 'ab');
        write(root, 'node_modules/pkg/index.js', 'module.exports = 2;\n');
        write(root, 'big.txt', 'y'.repeat(2_000));
        write(root, 'img.bin', Buffer.from([0, 9, 9, 9]));
        write(root, 'long.txt', Array.from({ length: 150 }, (_, i) => `line ${i}`).join('\n') + '\n');
        write(root, 'src/app.ts', 'export const answer: number = 42;\n');
      });
      const api = (await kit.read(e.id)).changeset;
      const reasons = new Set(api.coverage.omissions.map((o: any) => o.reason));
      expect([...reasons].sort()).toEqual(['BINARY', 'CAPTURE_LIMIT', 'IGNORED', 'SIZE', 'TRUNCATED']);

      await open(`#/execution/${e.id}`);
      await page.locator('[data-coverage="OMITTED"]').waitFor();
      expect(await page.locator('.coverage h2').innerText()).toBe(`⚠ Coverage incomplete: ${api.coverage.omissions.length} omissions`);
      const rows = await page.locator('tr.omission').evaluateAll((trs) => trs.map((tr) => {
        const t = tr as HTMLElement;
        return { path: t.dataset.path, reason: t.dataset.reason, detail: (t.children[2] as HTMLElement).innerText };
      }));
      expect(rows).toEqual(api.coverage.omissions);
      expect(await text('ol.files li .file-path')).toEqual(api.files.map((f: any) => f.path));
      const item = (p: string) => page.locator(`ol.files li[data-path="${p}"]`).innerText();
      expect(await item('img.bin')).toContain('binary');
      expect(await item('img.bin')).toContain('omitted: BINARY');
      expect(await item('big.txt')).toContain('omitted: SIZE');
      expect(await item('long.txt')).toContain('omitted: TRUNCATED');
      await shot('06-changeset-every-omission');

      // A rendered file is syntax-highlighted; an omitted one says why it is not rendered.
      await page.click('ol.files li[data-path="src/app.ts"] a');
      await page.locator('.diff-pane[data-path="src/app.ts"] .d2h-file-wrapper').waitFor();
      expect(await page.locator('.diff-pane .d2h-ins .hljs-keyword').count()).toBeGreaterThan(0);
      expect(await text('.diff-pane .d2h-ins .d2h-code-line-ctn')).toEqual(['export const answer: number = 42;']);
      await shot('07-changeset-highlighted');
      await page.click('ol.files li[data-path="long.txt"] a');
      await page.locator('.diff-pane[data-path="long.txt"] .not-rendered').waitFor();
      expect(await page.locator('.diff-pane .not-rendered').innerText()).toContain('TRUNCATED');
      await page.click('ol.files li[data-path="img.bin"] a');
      await page.locator('.diff-pane[data-path="img.bin"] [data-not-rendered="binary"]').waitFor();
      expect(page.url()).toContain(`#/execution/${e.id}/file/img.bin`);
      await shot('08-changeset-binary');
    } finally {
      await setPolicy(g.sql, { filePatchBytes: 1_048_576 });
    }
  });

  it('an unavailable boundary reads Coverage unavailable with its reason', async () => {
    const sessionID = await session('no start snapshot');
    const e: any = await host.beginExecution(sessionID, 'PROMPT');
    await host.settleExecution(e.id, 'FAILED', { error: 'the model gave up' });
    await open(`#/execution/${e.id}`);
    await page.locator('[data-coverage="UNAVAILABLE"]').waitFor();
    expect(await page.locator('.coverage h2').innerText()).toBe('✖ Coverage unavailable: BOUNDARY_UNAVAILABLE');
    expect(await page.locator('.boundary').innerText()).toContain('Boundary unavailable: START_NOT_CAPTURED');
    expect(await page.locator('ol.files li').count()).toBe(0);
    await shot('09-changeset-unavailable');
  });

  it('live: settlements appear without reload, also those made while the connection was down; a sealed session turns SEALED', async () => {
    const sessionID = await session('live');
    const settle = async (client = host.client) => {
      const e: any = await client.call(BeginExecutionDocument, { input: { sessionID, hostID: host.id!, trigger: 'PROMPT' } });
      await client.call(SettleExecutionDocument, { input: { executionID: e.id, status: 'SUCCEEDED' } });
      return e.id as string;
    };
    await settle();
    await open(`#/session/${sessionID}`);
    await page.locator('tr.execution-row[data-sequence="1"]').waitFor();
    await page.locator('#live[data-state="connected"]').waitFor();
    await page.evaluate(() => { (window as any).__noReload = true; });
    await settle();
    await page.locator('tr.execution-row[data-sequence="2"]').waitFor();
    await shot('10-live-settlement');

    // The gateway goes away; E3 settles through another instance meanwhile; the page resumes after E2.
    const other = await g.startInstance();
    const viaOther = new GatewayClient({ url: other.url, token: host.opts.token }); // hosts answer to the token that registered them
    await g.restart(async () => {
      await page.locator('#live[data-state="reconnecting"]').waitFor();
      await settle(viaOther);
      await shot('11-live-disconnected');
    });
    await page.locator('tr.execution-row[data-sequence="3"]').waitFor();
    expect(await page.locator('tr.execution-row').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.sequence))).toEqual(['3', '2', '1']);
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
    await page.locator('#live[data-state="connected"]').waitFor();

    // Sealed while the page is open: the badge follows sessionEvents.
    expect(await page.locator('#session-status').innerText()).toBe('IDLE');
    const sealed = await g.gql(`mutation($input: SealSessionInput!) { sealSession(input: $input) { __typename } }`, { input: { sessionID, timeoutMs: 10_000 } });
    expect(sealed.data.sealSession.__typename).toBe('SessionSealed');
    await page.locator('#session-status [data-status="SEALED"]').waitFor();
    expect(await page.locator('dd.sealed-at').innerText()).not.toBe('—');
    await page.locator('tr.execution-row[data-sequence="3"] .continuity', { hasText: 'broken: SESSION_SEALED' }).waitFor();
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
    await shot('12-live-sealed');
    await open('');
    await page.locator(`[data-session="${sessionID}"] .session-status [data-status="SEALED"]`).waitFor();
    await shot('13-sessions-with-sealed');
  });

  it('a running execution\'s page shows its changeset as soon as it settles', async () => {
    const sessionID = await session('running');
    const root = kit.worktree({ 'a.txt': 'before\n' });
    const cap = new WorktreeCapturer();
    const start = await cap.snapshot(host.client, sessionID, root, host.id);
    const e: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: start.id });
    await open(`#/execution/${e.id}`);
    await page.locator('[data-coverage="UNAVAILABLE"]').waitFor();
    expect(await page.locator('.coverage h2').innerText()).toBe('✖ Coverage unavailable: NOT_SETTLED');
    await page.evaluate(() => { (window as any).__noReload = true; });
    write(root, 'a.txt', 'after\n');
    const end = await cap.snapshot(host.client, sessionID, root, host.id);
    await host.settleExecution(e.id, 'SUCCEEDED', { endSnapshot: end.id });
    await page.locator('[data-coverage="COMPLETE"]').waitFor();
    await page.locator('.diff-pane[data-path="a.txt"] .d2h-file-wrapper').waitFor();
    expect(await text('.diff-pane .d2h-ins .d2h-code-line-ctn')).toEqual(['after']);
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
  });

  it('the sessions list updates a row when one of its executions settles, and its badge when it is sealed', async () => {
    const sessionID = await session('list live');
    const run = async () => {
      const e: any = await host.beginExecution(sessionID, 'PROMPT');
      await host.settleExecution(e.id, 'INTERRUPTED', { interruptReason: 'USER' });
    };
    await run();
    await open('');
    await page.locator(`[data-session="${sessionID}"] .last-settled`).waitFor();
    expect(await page.locator(`[data-session="${sessionID}"] .last-settled`).innerText()).toContain('#1');
    await page.evaluate(() => { (window as any).__noReload = true; });
    await run();
    await page.locator(`[data-session="${sessionID}"] .last-settled a`, { hasText: '#2' }).waitFor();
    const sealed = await g.gql(`mutation($input: SealSessionInput!) { sealSession(input: $input) { __typename } }`, { input: { sessionID, timeoutMs: 10_000 } });
    expect(sealed.data.sealSession.__typename).toBe('SessionSealed');
    await page.locator(`[data-session="${sessionID}"] .session-status [data-status="SEALED"]`).waitFor();
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
  });

  it('a 500-file changeset: the list comes without patches, each patch is fetched when its file is opened, j/k move between files', async () => {
    const sessionID = await session('five hundred files');
    const files: Record<string, string> = {};
    const name = (i: number) => `pkg/m${String(i).padStart(3, '0')}.ts`;
    for (let i = 0; i < 500; i++) files[name(i)] = `export const v${i} = ${i};\n`;
    const root = kit.worktree(files);
    const cap = new WorktreeCapturer();
    const e = await kit.runExecution(sessionID, root, cap, () => {
      for (let i = 0; i < 500; i++) write(root, name(i), `export const v${i} = ${i + 1};\n`);
    });
    const patchRequests: string[] = [];
    page.on('request', (r) => {
      const body = r.postData() ?? '';
      if (body.includes('ReviewFilePatch')) patchRequests.push(JSON.parse(body).variables.path);
    });
    const t0 = Date.now();
    const listResponse = page.waitForResponse((r) => (r.request().postData() ?? '').includes('query ReviewChangeset'));
    await open(`#/execution/${e.id}`);
    const listBody = await (await listResponse).text();
    await page.locator('ol.files li').nth(499).waitFor();
    await page.locator(`.diff-pane[data-path="${name(0)}"] .d2h-file-wrapper`).waitFor();
    const firstFileMs = Date.now() - t0;
    expect(listBody).not.toContain('diff --git');
    expect(await page.locator('.file-count').innerText()).toBe('500 files changed');
    expect(patchRequests.length).toBeLessThanOrEqual(2); // the open file and the next one, prefetched
    for (let i = 0; i < 3; i++) await page.keyboard.press('j');
    await page.locator(`.diff-pane[data-path="${name(3)}"] .d2h-file-wrapper`).waitFor();
    await page.keyboard.press('k');
    await page.locator(`.diff-pane[data-path="${name(2)}"] .d2h-file-wrapper`).waitFor();
    // The arrow keys move too while the file list has the focus.
    await page.focus(`ol.files li[data-path="${name(2)}"] a`);
    await page.keyboard.press('ArrowDown');
    await page.locator(`.diff-pane[data-path="${name(3)}"] .d2h-file-wrapper`).waitFor();
    expect(await page.evaluate(() => document.activeElement?.closest('li')?.dataset.path)).toBe(name(3));
    await page.keyboard.press('ArrowUp');
    await page.locator(`.diff-pane[data-path="${name(2)}"] .d2h-file-wrapper`).waitFor();
    expect(await text('.diff-pane .d2h-ins .d2h-code-line-ctn')).toEqual(['export const v2 = 3;']);
    expect(decodeURIComponent(page.url())).toContain(`#/execution/${e.id}/file/${name(2)}`);
    expect(await page.locator(`ol.files li[data-path="${name(2)}"]`).getAttribute('aria-selected')).toBe('true');
    expect(new Set(patchRequests).size).toBeLessThanOrEqual(6);
    // A deep link to a file far down the list opens it.
    await open(`#/execution/${e.id}/file/${encodeURIComponent(name(420))}`);
    await page.locator(`.diff-pane[data-path="${name(420)}"] .d2h-file-wrapper`).waitFor();
    console.log(`500-file changeset: list and first diff shown in ${firstFileMs} ms (list response ${listBody.length} bytes); ${new Set(patchRequests).size} patches fetched (5 files opened, each next one prefetched)`);
    await shot('14-changeset-500-files');
  });

  it('pages the sessions list, newest first, and shows parents and children', async () => {
    const parent = await session('paging parent');
    const child = (await g.gql(`mutation($p: ID!) { createSession(input: { title: "paging child", parentID: $p }) { ... on Session { id } } }`, { p: parent })).data.createSession.id;
    for (let i = 0; i < 21; i++) await session(`filler ${String(i).padStart(2, '0')}`);
    const all: string[] = [];
    let after: string | null = null;
    for (;;) {
      const r: any = (await g.gql(`query($a: String) { sessions(first: 100, after: $a) { edges { node { id } } pageInfo { hasNextPage endCursor } } }`, { a: after })).data.sessions;
      all.push(...r.edges.map((e: any) => e.node.id));
      if (!r.pageInfo.hasNextPage) break;
      after = r.pageInfo.endCursor;
    }
    await open('');
    await page.locator('ul.sessions li').nth(19).waitFor();
    const first = await page.locator('li.session-row').evaluateAll((li) => li.map((x) => (x as HTMLElement).dataset.session));
    expect(first).toEqual(all.slice(0, 20));
    await page.click('nav.pager a:has-text("Older")');
    await page.locator(`li.session-row[data-session="${all[20]}"]`).waitFor();
    const second = await page.locator('li.session-row').evaluateAll((li) => li.map((x) => (x as HTMLElement).dataset.session));
    expect(second).toEqual(all.slice(20, 40));
    expect(second).toContain(parent);
    expect(await page.locator(`li.session-row[data-session="${parent}"] .children`).innerText()).toContain('paging child');
    expect(await page.locator(`li.session-row[data-session="${child}"] .parent`).innerText()).toContain('paging parent');
    await shot('17-sessions-second-page');
    await page.click('nav.pager a:has-text("Newest")');
    await page.locator(`li.session-row[data-session="${all[0]}"]`).waitFor();
  });

  it('pages a session\'s executions, newest first', async () => {
    const sessionID = await session('many executions');
    for (let i = 0; i < 23; i++) {
      const e: any = await host.beginExecution(sessionID, 'PROMPT');
      await host.settleExecution(e.id, 'SUCCEEDED');
    }
    await open(`#/session/${sessionID}`);
    await page.locator('tr.execution-row').nth(19).waitFor();
    const seqs = () => page.locator('tr.execution-row').evaluateAll((rows) => rows.map((r) => Number((r as HTMLElement).dataset.sequence)));
    expect(await seqs()).toEqual(Array.from({ length: 20 }, (_, i) => 23 - i));
    await page.click('button.more:has-text("Older executions")');
    await page.locator('tr.execution-row[data-sequence="1"]').waitFor();
    expect(await seqs()).toEqual(Array.from({ length: 23 }, (_, i) => 23 - i));
    expect(await page.locator('button.more:has-text("Older executions")').isHidden()).toBe(true);
  });

  it('is readable in a narrow window: one column, no horizontal scrolling of the page', async () => {
    await page.setViewportSize({ width: 400, height: 800 });
    try {
      await page.evaluate(() => localStorage.removeItem('gateway.review.layout'));
      const { edges } = (await g.gql(`{ sessions(first: 100) { edges { node { title lastSettledExecution { id } } } } }`)).data.sessions;
      const id = edges.find((x: any) => x.node.title === 'every omission').node.lastSettledExecution.id;
      await open(`#/execution/${id}/file/src%2Fapp.ts`);
      await page.locator('.diff-pane[data-path="src/app.ts"] .d2h-file-wrapper').waitFor();
      const nav = (await page.locator('.file-nav').boundingBox())!;
      const pane = (await page.locator('.diff-pane').boundingBox())!;
      expect(pane.y).toBeGreaterThanOrEqual(nav.y + nav.height - 1);
      expect(await page.locator('.diff-pane .d2h-files-diff').count()).toBe(0); // inline by default when narrow
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
      await shot('15-narrow-changeset');
      await open('');
      await page.locator('ul.sessions').waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
      await shot('16-narrow-sessions');
    } finally {
      await page.setViewportSize({ width: 1400, height: 900 });
    }
  });

  it('bad input: unknown or malformed IDs and a path that did not change say so; a revoked token asks for a new one', async () => {
    const sessionID = await session('bad input');
    const e: any = await host.beginExecution(sessionID, 'PROMPT');
    await host.settleExecution(e.id, 'SUCCEEDED');
    const missing = sessionID.slice(0, -4) + (sessionID.endsWith('aaaa') ? 'bbbb' : 'aaaa');
    await open(`#/session/${missing}`);
    await page.locator('.error-box', { hasText: `No session ${missing}` }).waitFor();
    await open('#/session/not-an-id');
    await page.locator('.error-box').first().waitFor();
    await open(`#/execution/${e.id.slice(0, -4)}zzzz`);
    await page.locator('.error-box', { hasText: 'No execution' }).waitFor();

    const root = kit.worktree({ 'a.txt': '1\n' });
    const cap = new WorktreeCapturer();
    const x = await kit.runExecution(sessionID, root, cap, () => write(root, 'a.txt', '2\n'));
    await open(`#/execution/${x.id}/file/${encodeURIComponent('not/changed.txt')}`);
    await page.locator('.diff-pane .error-box', { hasText: 'not/changed.txt did not change in this execution.' }).waitFor();
    await shot('18-bad-input');

    // A token revoked while the page is live: its subscriptions end (4401) and the page asks again.
    const t = await createToken(g.sql, { role: 'reader', label: 'revoked in the review test' });
    await page.evaluate((v) => sessionStorage.setItem('gateway.review.token', v), t.secret);
    await open(`#/session/${sessionID}`);
    await page.locator('#live[data-state="connected"]').waitFor();
    const r = await g.gql(`mutation($id: ID!) { revokeToken(tokenID: $id) }`, { id: t.id });
    expect(r.data.revokeToken).toBe(true);
    await page.locator('form.sign-in', { hasText: 'refused the token' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('gateway.review.token'))).toBeNull();
    await shot('19-revoked-token');
    await page.evaluate((v) => sessionStorage.setItem('gateway.review.token', v), reader);
  });
});
