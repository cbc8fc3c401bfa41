import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { availableParallelism, loadavg } from 'node:os';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import type { TestGateway } from './harness.js';
import type { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { changesetKit, write } from './support/changeset-kit.js';
import { setPolicy } from '../domain/snapshots.js';
import { startReviewRig, type ReviewRig } from './support/review-rig.js';
import { TEST_OUTPUT } from './support/browser.js';
import { createToken } from '../domain/tokens.js';
import { BeginExecutionDocument, GatewayClient, SettleExecutionDocument } from '../client/index.js';
import { runDemo } from '../host/demo.js';

/**
 * The review page in a real browser (Debian's chromium through playwright-core) against a gateway
 * with real data made by the reference host: the canonical E1/E2 case, an execution with every kind
 * of omission, an unavailable boundary, a sealed session, a 500-file changeset, live settlements,
 * expanded context, the session tree. Screenshots go to test-output/review/ (printed at the end).
 */
const SHOTS = process.env.REVIEW_SCREENSHOTS ?? path.join(TEST_OUTPUT, 'review');
const WAIT = 30_000;

let rig: ReviewRig;
let g: TestGateway;
let host: ReferenceHost;
let browser: Browser;
let page: Page;
let reader: string;
const dirs: string[] = [];
const shots: string[] = [];
const kit = changesetKit(() => ({ g, host }), dirs);

/** A screenshot; of the viewport only for a page too tall to be worth a whole capture (500 files). */
async function shot(name: string, fullPage = true) {
  const file = path.join(SHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
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
/** The code of one file's rendered lines of a kind (ctx lines of the new side in a split table). */
const codes = (file: string, kind: 'add' | 'del' | 'ctx') =>
  text(`.file-card[data-path="${file}"] td.code[data-kind="${kind}"]${kind === 'ctx' ? ':is([data-side="new"],[data-side="both"])' : ''}`);
const treePaths = () => page.locator('.file-tree .tree-file:not([hidden])').evaluateAll((li) => li.map((x) => (x as HTMLElement).dataset.path));
const card = (file: string) => `.file-card[data-path="${file}"]`;

beforeAll(async () => {
  rmSync(SHOTS, { recursive: true, force: true });
  mkdirSync(SHOTS, { recursive: true });
  rig = await startReviewRig(WAIT);
  ({ g, host, reader, browser, page } = rig);
}, 180_000);

afterAll(async () => {
  await rig?.stop();
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
    // The page's own bundle stays small: highlight.js's languages are chunks of their own, loaded on demand.
    const css = /\/review\/(assets\/[^"]+\.css)/.exec(html)![1];
    const jsBytes = Buffer.from(await js.arrayBuffer());
    const cssBytes = Buffer.from(await (await fetch(`${base()}/review/${css}`)).arrayBuffer());
    const kb = (b: Buffer) => (gzipSync(b, { level: 9 }).length / 1024).toFixed(1);
    console.log(`review bundle: ${asset} ${(jsBytes.length / 1024).toFixed(1)} KB (${kb(jsBytes)} KB gzip), ${css} ${(cssBytes.length / 1024).toFixed(1)} KB (${kb(cssBytes)} KB gzip)`);
    expect(gzipSync(jsBytes, { level: 9 }).length).toBeLessThan(60 * 1024);
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
    await page.getByText('This is not a gateway token: paste the whole gw_… line that gateway token create printed (not its tok_… ID).').waitFor();
    await page.fill('#token', `gw_${'x'.repeat(32)}`);
    await page.click('form.sign-in button[type=submit]');
    await page.getByText('The gateway refused this token: it is unknown or revoked. Make a new one where the gateway runs (with its data folder or DATABASE_URL): gateway token create --role reader').waitFor();
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

    // E1's page: the timeline (prompt, what was said, the job), then exactly one -one +two, split and unified.
    await page.click(`tr[data-execution="${e1.id}"] a[href="#/execution/${e1.id}"] >> nth=0`);
    await page.locator('[data-coverage="COMPLETE"]').waitFor();
    expect(await page.locator('.coverage').innerText()).toContain('Coverage complete');
    expect(await treePaths()).toEqual(['a.txt']);
    await page.locator(`${card('a.txt')} table.diff`).waitFor();
    expect(await codes('a.txt', 'del')).toEqual(['one']);
    expect(await codes('a.txt', 'add')).toEqual(['two']);
    expect(await page.locator(`${card('a.txt')} table.diff-split`).count()).toBe(1);
    expect(await page.locator('.file-card .file-head').count()).toBe(1); // one header per file
    expect(await page.locator(`${card('a.txt')} tr.gap-row[data-gap="1"]`).count()).toBe(0); // the file ends at the change
    const boundary = await page.locator('.boundary').innerText();
    expect(boundary).toContain(s0.id);
    expect(boundary).toContain(s1.id);
    await page.locator('ol.timeline li.tl').first().waitFor();
    const tl = await page.locator('ol.timeline > li').evaluateAll((lis) => lis.map((li) => li.className.replace('tl ', '')));
    expect(tl).toEqual(['tl-prompt', 'tl-text', 'tl-text retracted', 'tl-job']);
    expect(await page.locator('ol.timeline li.tl-prompt pre.text').innerText()).toBe('Please change a.txt to two.');
    expect(await page.locator(`ol.timeline li[data-message="${said.id}"] pre.text`).innerText()).toBe('I changed a.txt to two.');
    expect(await page.locator(`ol.timeline li[data-message="${said.id}"]`).innerText()).toContain('corrected · rev 2');
    expect(await page.locator(`ol.timeline li[data-message="${wrong.id}"]`).innerText()).not.toContain('The tests pass');
    const jobEntry = await page.locator(`ol.timeline li.tl-job[data-job="${job.id}"]`).innerText();
    expect(jobEntry).toContain('echo checking');
    expect(jobEntry).toContain('COMPLETED');
    expect(jobEntry).toContain('exit 0');
    await shot('04-execution-e1-split');
    await page.click('.layout-toggle button[data-layout="unified"]');
    await page.locator(`${card('a.txt')} table.diff-unified`).waitFor();
    expect(await page.locator(`${card('a.txt')} tr.ln-del td.num-old`).allInnerTexts()).toEqual(['1']);
    expect(await codes('a.txt', 'del')).toEqual(['one']);
    await shot('05-execution-e1-unified');
    await page.click('.layout-toggle button[data-layout="split"]');

    // E2 through its deep link: two -> three.
    await open(`#/execution/${e2.id}/file/a.txt`);
    await page.locator(`${card('a.txt')}.focused table.diff`).waitFor();
    expect(await codes('a.txt', 'del')).toEqual(['two']);
    expect(await codes('a.txt', 'add')).toEqual(['three']);
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
      // The stack in the tree's order (folders first), every file of the changeset in both.
      expect(await page.locator('.file-card').evaluateAll((c) => c.map((x) => (x as HTMLElement).dataset.path))).toEqual(await treePaths());
      expect((await treePaths()).sort()).toEqual(api.files.map((f: any) => f.path).sort());
      const item = (p: string) => page.locator(`${card(p)} .file-head`).innerText();
      expect(await item('img.bin')).toContain('binary');
      expect(await item('img.bin')).toContain('omitted: BINARY');
      expect(await item('big.txt')).toContain('omitted: SIZE');
      expect(await item('long.txt')).toContain('omitted: TRUNCATED');
      await shot('06-changeset-every-omission');

      // A rendered file is syntax-highlighted; an omitted one says why it is not rendered.
      await page.click('.file-tree .tree-file[data-path="src/app.ts"] a');
      await page.locator(`${card('src/app.ts')}.focused table.diff`).waitFor();
      expect(await page.locator(`${card('src/app.ts')} td.code[data-kind="add"] .hljs-keyword`).count()).toBeGreaterThan(0);
      expect(await codes('src/app.ts', 'add')).toEqual(['export const answer: number = 42;']);
      // No highlight box over the row: the token's own background is the row's.
      expect(await page.locator(`${card('src/app.ts')} td.code[data-kind="add"] .hljs-keyword`).first().evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgba(0, 0, 0, 0)');
      await shot('07-changeset-highlighted');
      await page.click('.file-tree .tree-file[data-path="long.txt"] a');
      await page.locator(`${card('long.txt')} .not-rendered`).waitFor();
      expect(await page.locator(`${card('long.txt')} .not-rendered`).innerText()).toContain('TRUNCATED');
      await page.click('.file-tree .tree-file[data-path="img.bin"] a');
      await page.locator(`${card('img.bin')} [data-not-rendered="binary"]`).waitFor();
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
    expect(await page.locator('.file-card').count()).toBe(0);
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
    await page.locator(`${card('a.txt')} table.diff`).waitFor();
    expect(await codes('a.txt', 'add')).toEqual(['after']);
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

  it('a 500-file changeset opens at once: the list without patches, each patch fetched as its file scrolls into view; viewed marks survive a reload; the tree filter hides files; j/k move', async () => {
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
    const onRequest = (r: any) => {
      const body = r.postData() ?? '';
      if (body.includes('ReviewFilePatch')) patchRequests.push(JSON.parse(body).variables.path);
    };
    page.on('request', onRequest);
    try {
      const t0 = Date.now();
      // The typed client sends its documents by hash (trusted documents), with the operation's name.
      const listResponse = page.waitForResponse((r) => (r.request().postData() ?? '').includes('"operationName":"ReviewChangeset"'));
      await open(`#/execution/${e.id}`);
      const listBody = await (await listResponse).text();
      await page.locator('.file-card').nth(499).waitFor({ state: 'attached' });
      const listMs = Date.now() - t0;
      await page.locator(`${card(name(0))} table.diff`).waitFor();
      const firstFileMs = Date.now() - t0;
      expect(listBody).not.toContain('diff --git');
      expect(await page.locator('.file-count').innerText()).toBe('500 files changed');
      expect(await treePaths()).toHaveLength(500);
      // Only the files near the viewport were fetched; the last one was not.
      const early = new Set(patchRequests).size;
      expect(early).toBeGreaterThan(0);
      expect(early).toBeLessThan(60);
      expect(patchRequests).not.toContain(name(499));
      expect(await page.locator(`${card(name(499))} table.diff`).count()).toBe(0);
      await shot('14-changeset-500-files', false);
      // Jumping to the end fetches the files there, not the ones in between.
      const t1 = Date.now();
      await page.locator(card(name(499))).scrollIntoViewIfNeeded();
      await page.locator(`${card(name(499))} table.diff`).waitFor();
      const lastFileMs = Date.now() - t1;
      expect(await codes(name(499), 'add')).toEqual(['export const v499 = 500;']);
      expect(new Set(patchRequests).size).toBeLessThan(150);
      expect(patchRequests).not.toContain(name(250));

      // j / k move between files (the URL follows).
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.keyboard.press('j');
      await page.locator(`${card(name(0))}.focused`).waitFor();
      await page.keyboard.press('j');
      await page.keyboard.press('j');
      await page.locator(`${card(name(2))}.focused table.diff`).waitFor();
      await page.keyboard.press('k');
      await page.locator(`${card(name(1))}.focused`).waitFor();
      expect(decodeURIComponent(page.url())).toContain(`#/execution/${e.id}/file/${name(1)}`);

      // Viewed: the file folds, the tree ticks it, the count follows; all of it survives a reload.
      await page.check(`${card(name(1))} .viewed-box`);
      expect(await page.locator(`${card(name(1))} .file-body`).isHidden()).toBe(true);
      expect(await page.locator('.viewed-progress').innerText()).toBe('1 / 500 files viewed');
      await open(`#/execution/${e.id}`); // not the file's own link, which opens it
      await page.reload();
      await page.locator(`${card(name(1))}.is-viewed`).waitFor({ state: 'attached' });
      expect(await page.locator(`${card(name(1))} .viewed-box`).isChecked()).toBe(true);
      expect(await page.locator(`${card(name(1))} .file-body`).isHidden()).toBe(true);
      expect(await page.locator(`.tree-file[data-path="${name(1)}"]`).getAttribute('class')).toContain('is-viewed');
      expect(await page.locator('.viewed-progress').innerText()).toBe('1 / 500 files viewed');
      expect(await page.locator(`${card(name(0))} .viewed-box`).isChecked()).toBe(false);
      // Collapse by hand, and open again.
      await page.click(`${card(name(0))} button.collapse`);
      expect(await page.locator(`${card(name(0))} .file-body`).isHidden()).toBe(true);
      await page.click(`${card(name(0))} button.collapse`);
      await page.locator(`${card(name(0))} table.diff`).waitFor();
      await page.uncheck(`${card(name(1))} .viewed-box`);
      expect(await page.locator('.viewed-progress').innerText()).toBe('0 / 500 files viewed');

      // The tree filter hides the other files, in the tree and in the stack.
      await page.fill('.tree-filter', 'm42');
      expect(await treePaths()).toEqual(Array.from({ length: 10 }, (_, i) => name(420 + i)));
      expect(await page.locator('.file-card:not([hidden])').count()).toBe(10);
      await shot('15-changeset-500-files-filtered', false);
      await page.fill('.tree-filter', '');
      expect(await page.locator('.file-card:not([hidden])').count()).toBe(500);

      // A deep link to a file far down the stack opens it there.
      const t2 = Date.now();
      await open(`#/execution/${e.id}/file/${encodeURIComponent(name(420))}`);
      await page.locator(`${card(name(420))}.focused table.diff`).waitFor();
      const deepMs = Date.now() - t2;
      expect(await page.evaluate((sel) => { const r = document.querySelector(sel)!.getBoundingClientRect(); return r.top < window.innerHeight && r.bottom > 0; }, card(name(420)))).toBe(true);
      console.log(`500-file changeset (load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${availableParallelism()} cores): 500 files listed in ${listMs} ms, first diff drawn in ${firstFileMs} ms (list response ${listBody.length} bytes, no patches); ${early} patches fetched for the first screen; last file drawn ${lastFileMs} ms after jumping to it; deep link to file 421 drawn in ${deepMs} ms; ${new Set(patchRequests).size} patches fetched in all`);
    } finally {
      page.off('request', onRequest);
    }
  });

  it('expands context above and below each hunk with the exact lines of the stored file, until the whole file shows', async () => {
    const sessionID = await session('expand context');
    const before = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`);
    const after = [...before];
    after[29] = 'changed 30';
    after[69] = 'changed 70';
    after.splice(85, 0, 'inserted after 85');
    const root = kit.worktree({ 'ctx.ts': `${before.join('\n')}\n` });
    const e = await kit.runExecution(sessionID, root, new WorktreeCapturer(), () => write(root, 'ctx.ts', `${after.join('\n')}\n`));
    await page.evaluate(() => localStorage.setItem('gateway.review.layout', 'unified'));
    await open(`#/execution/${e.id}`);
    const c = card('ctx.ts');
    await page.locator(`${c} table.diff-unified`).waitFor();
    const rows = () => page.locator(`${c} tr.ln`).evaluateAll((trs) => trs.map((tr) => {
      const n = (cls: string) => { const t = (tr.querySelector(cls) as HTMLElement).innerText; return t ? Number(t) : null; };
      return { old: n('td.num-old'), new: n('td.num-new'), text: (tr.querySelector('td.code') as HTMLElement).innerText };
    }));
    const newSide = async () => (await rows()).filter((r) => r.new != null);
    // Three hunks with three lines of context: new 27-33, 67-73, 83-89.
    expect((await newSide()).map((r) => r.new)).toEqual([27, 28, 29, 30, 31, 32, 33, 67, 68, 69, 70, 71, 72, 73, 83, 84, 85, 86, 87, 88, 89]);
    expect(await page.locator(`${c} tr.gap-row`).evaluateAll((r) => r.map((x) => (x as HTMLElement).dataset.gap))).toEqual(['0', '1', '2', '3']);
    await shot('16-expand-before');

    // ↑ over hunk 2: the 20 lines above it, numbered on both sides, exactly as stored.
    await page.click(`${c} tr.gap-row[data-gap="1"] button.expand-up`);
    await page.locator(`${c} tr.ln td.num-new >> text="47"`).waitFor();
    const shown = (await rows()).filter((r) => r.new! >= 47 && r.new! <= 66);
    expect(shown).toEqual(Array.from({ length: 20 }, (_, i) => ({ old: 47 + i, new: 47 + i, text: `line ${47 + i}` })));
    // 13 lines left between hunks 1 and 2: one button shows them all, and the two hunks join.
    await page.click(`${c} tr.gap-row[data-gap="1"] button.expand-all`);
    await page.locator(`${c} tr.ln td.num-new >> text="34"`).waitFor();
    expect(await page.locator(`${c} tr.gap-row[data-gap="1"]`).count()).toBe(0);
    await page.click(`${c} tr.gap-row[data-gap="2"] button.expand-all`);
    await page.locator(`${c} tr.ln td.num-new >> text="74"`).waitFor();
    // ↓ under the last hunk: the end of the file (after the inserted line, old = new - 1).
    await page.click(`${c} tr.gap-row[data-gap="3"] button.expand-down`);
    await page.locator(`${c} tr.ln td.num-new >> text="101"`).waitFor();
    expect((await rows()).filter((r) => r.new! >= 90)).toEqual(Array.from({ length: 12 }, (_, i) => ({ old: 89 + i, new: 90 + i, text: `line ${89 + i}` })));
    expect(await page.locator(`${c} tr.gap-row[data-gap="3"]`).count()).toBe(0);
    // ↑ over the first hunk twice: 20 lines, then the last 6.
    await page.click(`${c} tr.gap-row[data-gap="0"] button.expand-up`);
    await page.locator(`${c} tr.ln td.num-new >> text="7"`).waitFor();
    await page.click(`${c} tr.gap-row[data-gap="0"] button`);
    await page.locator(`${c} tr.ln td.num-new >> text="1"`).first().waitFor();
    // The whole file now shows: the new side reads as the stored new file, the old side as the old one.
    const all = await rows();
    expect(all.filter((r) => r.new != null).map((r) => r.text)).toEqual(after);
    expect(all.filter((r) => r.old != null).map((r) => r.text)).toEqual(before);
    await shot('17-expand-after');
    // The split layout keeps what was expanded.
    await page.click('.layout-toggle button[data-layout="split"]');
    await page.locator(`${c} table.diff-split`).waitFor();
    expect(await page.locator(`${c} td.code[data-side="new"]:not([data-kind="empty"])`).allInnerTexts()).toEqual(after);
    // A range's context comes from the end of its last execution: the same lines.
    await open(`#/session/${sessionID}/changes/${e.id}/${e.id}`);
    await page.locator(`${c} table.diff`).waitFor();
    await page.click(`${c} tr.gap-row[data-gap="1"] button.expand-up`);
    await page.locator(`${c} td.num-new >> text="47"`).waitFor();
    expect(await page.locator(`${c} td.code[data-side="new"][data-kind="ctx"]`).allInnerTexts()).toContain('line 47');
    await page.evaluate(() => localStorage.removeItem('gateway.review.layout'));
  });

  it('an execution as a timeline: the prompt, reasoning, each tool call with its command, output, duration and job status, then the files it changed', async () => {
    const sessionID = await session('timeline');
    const root = kit.worktree({ 'a.txt': 'x\n' });
    const cap = new WorktreeCapturer();
    const start = await cap.snapshot(host.client, sessionID, root, host.id);
    const e: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: start.id });
    await host.appendText(sessionID, e.id, 'Replace x with y in a.txt.', 'PROMPT');
    const command = `printf 'y\\n' > '${root}/a.txt' && echo replaced`;
    const job = await host.runJob(sessionID, e.id, command, { title: 'replace' });
    await job.done;
    const t = Date.now();
    await host.appendMessage({ sessionID, executionID: e.id, role: 'ASSISTANT', origin: 'MODEL', parts: [
      { type: 'REASONING', text: 'The file has one line.\nA shell edit is enough.' },
      { type: 'TOOL', tool: 'bash', title: 'replace x', status: 'completed', input: { command }, output: 'replaced\n',
        startedAt: new Date(t - 1500).toISOString(), endedAt: new Date(t).toISOString() },
      { type: 'TEXT', text: 'a.txt now reads y.' },
    ] });
    const end = await cap.snapshot(host.client, sessionID, root, host.id);
    await host.settleExecution(e.id, 'SUCCEEDED', { endSnapshot: end.id });

    await open(`#/execution/${e.id}`);
    await page.locator('ol.timeline li.tl-tool').waitFor();
    const kinds = await page.locator('ol.timeline > li').evaluateAll((lis) => lis.map((li) => li.className.replace('tl ', '')));
    expect(kinds).toEqual(['tl-prompt', 'tl-reasoning', 'tl-tool', 'tl-text']);
    const tool = page.locator('ol.timeline li.tl-tool');
    expect(await tool.locator('pre.command').innerText()).toBe(command);
    expect(await tool.locator('pre.output').innerText()).toBe('replaced\n');
    expect(await tool.locator('.duration').innerText()).toBe('· 1.5 s');
    expect(await tool.locator(`.job-facts[data-job="${job.id}"]`).innerText()).toContain('COMPLETED');
    expect(await tool.locator('.job-facts').innerText()).toContain('exit 0');
    // The reasoning folds; opened, it reads in full.
    expect(await page.locator('ol.timeline li.tl-reasoning pre').isVisible()).toBe(false);
    await page.click('ol.timeline li.tl-reasoning summary');
    expect(await page.locator('ol.timeline li.tl-reasoning pre').innerText()).toBe('The file has one line.\nA shell edit is enough.');
    // Then the change the tool call made, inline.
    await page.locator(`${card('a.txt')} table.diff`).waitFor();
    expect(await codes('a.txt', 'del')).toEqual(['x']);
    expect(await codes('a.txt', 'add')).toEqual(['y']);
    await shot('18-execution-timeline');
  });

  it('the session tree: children under their parents, collapsible; search by title or directory', async () => {
    const create = async (title: string, directory: string, parentID?: string) =>
      (await g.gql(`mutation($input: CreateSessionInput!) { createSession(input: $input) { ... on Session { id } } }`,
        { input: { title, directory, parentID } })).data.createSession.id as string;
    const parent = await create('tree parent', '/w/tree');
    const child = await create('tree child', '/w/tree/sub', parent);
    const grandchild = await create('tree grandchild', '/w/tree/sub/deeper', child);
    const other = await create('unrelated work', '/w/elsewhere');
    await open('');
    const row = (id: string) => page.locator(`li.session-row[data-session="${id}"]`);
    await page.locator(`ul.session-tree > li[data-session="${parent}"] li[data-session="${child}"] li[data-session="${grandchild}"]`).waitFor();
    expect(await page.locator(`ul.session-tree > li[data-session="${child}"]`).count()).toBe(0);
    expect(await page.locator(`ul.session-tree > li[data-session="${grandchild}"]`).count()).toBe(0);
    await shot('19-session-tree');
    // Collapse the parent: its children go; open it again: they come back.
    await page.click(`li[data-session="${parent}"] > .row-main .tree-toggle`);
    expect(await row(child).isVisible()).toBe(false);
    expect(await page.locator(`li[data-session="${parent}"] > .row-main .tree-toggle`).getAttribute('aria-expanded')).toBe('false');
    await page.click(`li[data-session="${parent}"] > .row-main .tree-toggle`);
    expect(await row(child).isVisible()).toBe(true);
    // Search by title: the match and its ancestors (opened), nothing else.
    await page.click(`li[data-session="${parent}"] > .row-main .tree-toggle`);
    await page.fill('.session-search', 'GRANDchild');
    expect(await row(grandchild).isVisible()).toBe(true);
    expect(await row(child).isVisible()).toBe(true);
    expect(await row(parent).isVisible()).toBe(true);
    expect(await row(other).isVisible()).toBe(false);
    expect(await page.locator('.session-count').innerText()).toMatch(/^1 of \d+ sessions match$/);
    await shot('20-session-tree-search');
    // Search by directory.
    await page.fill('.session-search', '/w/elsewhere');
    expect(await row(other).isVisible()).toBe(true);
    expect(await row(parent).isVisible()).toBe(false);
    await page.fill('.session-search', '/w/tree/sub');
    expect(await row(child).isVisible()).toBe(true);
    expect(await row(grandchild).isVisible()).toBe(true);
    expect(await row(other).isVisible()).toBe(false);
    await page.fill('.session-search', '');
    expect(await row(other).isVisible()).toBe(true);
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

  it('the demo\'s data: the tree, the session, each execution\'s timeline with its jobs and changed files', async () => {
    const demo = await runDemo(['--url', g.url], () => {}, { GATEWAY_TOKEN: g.admin });
    await open('');
    await page.locator(`li.session-row[data-session="${demo.sessionID}"] li.session-row[data-session="${demo.childID}"]`).waitFor();
    await page.fill('.session-search', 'Demo:');
    await shot('30-demo-tree');
    await page.click(`li.session-row[data-session="${demo.sessionID}"] > .row-main a`);
    await page.locator(`tr.execution-row[data-execution="${demo.changedID}"]`).waitFor();
    await shot('31-demo-session');

    await open(`#/execution/${demo.changedID}`);
    await page.locator('[data-coverage="COMPLETE"]').waitFor();
    await page.locator('ol.timeline li.tl-job').waitFor();
    const job = await page.locator('ol.timeline li.tl-job').innerText();
    expect(job).toContain('edit greeting');
    expect(job).toContain("printf 'hello, world\\n' > greeting.txt");
    expect(job).toContain('COMPLETED');
    expect(await page.locator('ol.timeline li.tl-prompt pre.text').innerText()).toBe('Please make greeting.txt friendlier and leave a note.');
    expect(await page.locator('ol.timeline li.tl-prompt').innerText()).toContain('Sent before the execution began.');
    expect(await page.locator('ol.timeline li.tl-text pre.text').innerText()).toBe('greeting.txt now says "hello, world"; notes.md records it.');
    await page.locator(`${card('greeting.txt')} table.diff`).waitFor();
    await page.locator(`${card('notes.md')} table.diff`).waitFor();
    expect(await codes('greeting.txt', 'del')).toEqual(['hello']);
    expect(await codes('greeting.txt', 'add')).toEqual(['hello, world']);
    expect(await codes('notes.md', 'add')).toEqual(['# Notes', '', '- greeting updated']);
    await shot('32-demo-execution-1');

    await open(`#/execution/${demo.omittedID}`);
    await page.locator('[data-coverage="OMITTED"]').waitFor();
    expect(await page.locator('tr.omission').evaluateAll((r) => r.map((x) => `${(x as HTMLElement).dataset.path} ${(x as HTMLElement).dataset.reason}`))).toEqual(['build.log IGNORED']);
    await page.locator('ol.timeline li.tl-job').waitFor();
    const failed = await page.locator('ol.timeline li.tl-job').innerText();
    expect(failed).toContain('failing build');
    expect(failed).toContain('ERROR');
    expect(failed).toContain('exit 3');
    expect(await page.locator('ol.timeline li.tl-prompt pre.text').innerText()).toBe('Now run the build (it fails on purpose).');
    await page.locator(`${card('greeting.txt')} table.diff`).waitFor();
    expect(await codes('greeting.txt', 'add')).toEqual(['hello, world!']);
    expect(await page.locator('.file-card').evaluateAll((c) => c.map((x) => (x as HTMLElement).dataset.path))).toEqual(['greeting.txt']);
    // The user's edit of README.md between the two executions: not in execution 2's diff, but in a banner above it.
    const drift = page.locator('.drift-banner[data-drift="CHANGED"]');
    expect(await drift.locator('h2').innerText()).toBe('⚠ Changed outside any execution before this one: 1 file');
    expect(await drift.innerText()).toContain('Between the end of execution #1 and the start of #2');
    await shot('33-demo-execution-2-with-drift');
    await drift.locator('a', { hasText: 'Review the drift' }).click();
    await page.locator(`${card('README.md')} table.diff`).waitFor();
    expect(await page.locator('h1').innerText()).toBe('Changed outside any execution before #2');
    expect(await codes('README.md', 'add')).toEqual(['The user added this line between two executions.']);
    expect(await codes('README.md', 'del')).toEqual([]);
    expect(await page.locator('[data-coverage="COMPLETE"]').count()).toBe(1);
    await shot('34-demo-drift');

    // The session: the drift between #1 and #2 as a row of its own; nothing changed between #2 and #3 (both captured).
    await open(`#/session/${demo.sessionID}`);
    await page.locator('tr.drift-row[data-drift-before="2"]').waitFor();
    expect(await page.locator('tr.drift-row[data-drift-before="2"]').innerText()).toContain('Changed outside any execution between #1 and #2: 1 file +1 −0');
    expect(await page.locator('tr.drift-row').count()).toBe(1);
    await shot('35-demo-session-drift-rows');

    // The range from the start of #1 to the end of #2: both executions' edits and the user's, composed.
    await page.selectOption('select.range-from', demo.changedID);
    await page.selectOption('select.range-to', demo.omittedID);
    await page.click('.range-picker button[type=submit]');
    await page.locator('h1.range-title').waitFor();
    expect(decodeURIComponent(page.url())).toContain(`#/session/${demo.sessionID}/changes/${demo.changedID}/${demo.omittedID}`);
    expect(await page.locator('h1.range-title').innerText()).toContain('Changes from execution #1 to #2');
    expect(await page.locator('.file-card').evaluateAll((c) => c.map((x) => (x as HTMLElement).dataset.path))).toEqual(['README.md', 'greeting.txt', 'notes.md']);
    await page.locator(`${card('greeting.txt')} table.diff`).waitFor();
    expect(await codes('greeting.txt', 'del')).toEqual(['hello']);
    expect(await codes('greeting.txt', 'add')).toEqual(['hello, world!']); // one change from #1's start, not two
    await page.locator(`${card('notes.md')} table.diff`).waitFor();
    expect(await codes('notes.md', 'add')).toEqual(['# Notes', '', '- greeting updated']);
    expect(await page.locator('tr.omission').evaluateAll((r) => r.map((x) => `${(x as HTMLElement).dataset.path} ${(x as HTMLElement).dataset.reason}`))).toEqual(['build.log IGNORED']);
    expect(await page.locator('.incomplete-note').innerText()).toContain('#2');
    await shot('36-demo-range-1-to-2');
    // A bad range (reversed) says so.
    await open(`#/session/${demo.sessionID}/changes/${demo.omittedID}/${demo.changedID}`);
    await page.locator('.error-box[data-error]').waitFor();
  });

  it('is readable in a narrow window: one column, no horizontal scrolling of the page', async () => {
    await page.setViewportSize({ width: 400, height: 800 });
    try {
      await page.evaluate(() => localStorage.removeItem('gateway.review.layout'));
      const { edges } = (await g.gql(`{ sessions(first: 100) { edges { node { title lastSettledExecution { id } } } } }`)).data.sessions;
      const id = edges.find((x: any) => x.node.title === 'every omission').node.lastSettledExecution.id;
      await open(`#/execution/${id}/file/src%2Fapp.ts`);
      await page.locator(`${card('src/app.ts')}.focused table.diff`).waitFor();
      const tree = (await page.locator('.tree-box').boundingBox())!;
      const stack = (await page.locator('.file-stack').boundingBox())!;
      expect(stack.y).toBeGreaterThanOrEqual(tree.y + tree.height - 1); // one column: the tree above the files
      expect(await page.locator('.tree-box').getAttribute('open')).toBeNull(); // folded on a phone
      expect(await page.locator(`${card('src/app.ts')} table.diff-unified`).count()).toBe(1); // unified by default when narrow
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
      await shot('21-narrow-changeset');
      const timelineID = edges.find((x: any) => x.node.title === 'timeline').node.lastSettledExecution.id;
      await open(`#/execution/${timelineID}`);
      await page.locator('ol.timeline li.tl-tool').waitFor();
      await page.locator(card('a.txt')).scrollIntoViewIfNeeded();
      await page.locator(`${card('a.txt')} table.diff`).waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
      await shot('22-narrow-timeline');
      await open('');
      await page.locator('ul.sessions').waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
      await shot('23-narrow-sessions');
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
    await page.locator('.changes-section .error-box', { hasText: 'not/changed.txt did not change in this execution.' }).waitFor();
    await shot('24-bad-input');

    // A token revoked while the page is live: its subscriptions end (4401) and the page asks again.
    const t = await createToken(g.sql, { role: 'reader', label: 'revoked in the review test' });
    await page.evaluate((v) => sessionStorage.setItem('gateway.review.token', v), t.secret);
    await open(`#/session/${sessionID}`);
    await page.locator('#live[data-state="connected"]').waitFor();
    const r = await g.gql(`mutation($id: ID!) { revokeToken(tokenID: $id) }`, { id: t.id });
    expect(r.data.revokeToken).toBe(true);
    await page.locator('form.sign-in', { hasText: /The gateway refused (the|this) token: it (was revoked while the page was open|is unknown or revoked)\. .*gateway token create --role reader/ }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('gateway.review.token'))).toBeNull();
    await shot('25-revoked-token');
    await page.evaluate((v) => sessionStorage.setItem('gateway.review.token', v), reader);
  });
});
