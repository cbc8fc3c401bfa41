import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { TestGateway } from './harness.js';
import type { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { changesetKit, write } from './support/changeset-kit.js';
import { startReviewRig, type ReviewRig } from './support/review-rig.js';

/**
 * The review page shows renames and turns (issue 49, defects 4 and 7), in Chromium: a moved file is one card, old →
 * new path with its similarity and only its differences, in an execution, a range and a drift; the executions one
 * prompt started (an OpenCode turn: one execution per step) are grouped under that prompt on the session page and on
 * each execution's timeline, with the turn's combined changes one click away.
 */
const WAIT = 30_000;

let rig: ReviewRig;
let g: TestGateway;
let host: ReferenceHost;
let page: Page;
const dirs: string[] = [];
const kit = changesetKit(() => ({ g, host }), dirs);

const base = () => g.url.replace(/\/graphql$/, '');
const open = (hash: string) => page.goto(`${base()}/review/${hash}`);
const card = (p: string) => `.file-card[data-path="${p}"]`;
const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1} of the file`).join('\n') + '\n';

function move(root: string, from: string, to: string) {
  mkdirSync(path.dirname(path.join(root, to)), { recursive: true });
  renameSync(path.join(root, from), path.join(root, to));
}

async function session(title: string): Promise<string> {
  const r = await g.gql(`mutation($input: CreateSessionInput!) { createSession(input: $input) { __typename ... on Session { id } } }`,
    { input: { title, directory: '/w/review-turns' } });
  return r.data.createSession.id;
}

beforeAll(async () => {
  rig = await startReviewRig(WAIT);
  ({ g, host, page } = rig);
}, 180_000);

afterAll(async () => {
  await rig?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('renames on the review page', () => {
  it('a moved file is one card: old → new path, its similarity, only its differences; a plain move says so; the filter finds it by either path', async () => {
    const sessionID = await session('renames');
    const root = kit.worktree({ 'src/util.ts': lines(30), 'docs/a.md': '# A\n\nsome text\n', 'keep.txt': 'k\n' });
    const e = await kit.runExecution(sessionID, root, new WorktreeCapturer(), () => {
      rmSync(path.join(root, 'src/util.ts'));
      write(root, 'src/helpers.ts', lines(30).replace('line 7 of the file', 'line seven, edited'));
      move(root, 'docs/a.md', 'guide/a.md');
    });
    await open(`#/execution/${e.id}`);
    await page.locator(`${card('src/helpers.ts')} table.diff`).waitFor();
    expect(await page.locator('.file-card').evaluateAll((c) => c.map((x) => `${(x as HTMLElement).dataset.status} ${(x as HTMLElement).dataset.path}`)))
      .toEqual(['RENAMED guide/a.md', 'RENAMED src/helpers.ts']);
    expect((await page.locator('.changes-section .totals').innerText()).replace(/\s+/g, ' ')).toBe('2 files changed +1 −1');

    const edited = card('src/helpers.ts');
    expect(await page.locator(`${edited} .file-name`).innerText()).toBe('src/util.ts → src/helpers.ts');
    expect(await page.locator(`${edited} .file-status`).innerText()).toBe('R');
    expect(await page.locator(`${edited} .badge-rename`).innerText()).toMatch(/^renamed · 9\d% similar$/);
    expect(await page.locator(`${edited} td.code[data-kind="del"]`).allInnerTexts()).toEqual(['line 7 of the file']);
    expect(await page.locator(`${edited} td.code[data-kind="add"]`).allInnerTexts()).toEqual(['line seven, edited']);
    // The context around the change expands from the new path's stored text.
    await page.click(`${edited} tr.gap-row[data-gap="0"] button.expand-up`);
    await page.locator(`${edited} td.num-new`, { hasText: /^1$/ }).first().waitFor();

    const moved = card('guide/a.md');
    expect(await page.locator(`${moved} .file-name`).innerText()).toBe('docs/a.md → guide/a.md');
    expect(await page.locator(`${moved} .badge-rename`).innerText()).toBe('renamed · content unchanged');
    await page.locator(`${moved} .rename-only`).waitFor();
    expect(await page.locator(`${moved} .file-diff`).innerText()).toBe('File renamed without changes. docs/a.md → guide/a.md');
    await page.click(`${moved} button.view-file`);
    await page.locator(`${moved} .file-view table.file-text`).waitFor();
    expect(await page.locator(`${moved} .file-view td.code`).allInnerTexts()).toEqual(['# A', '', 'some text']);

    // The old path finds the file too.
    await page.fill('.tree-filter', 'util');
    await page.locator(`.file-tree .tree-file[data-path="guide/a.md"]`).waitFor({ state: 'hidden' });
    expect(await page.locator(`.file-tree .tree-file[data-path="src/helpers.ts"]`).isVisible()).toBe(true);
    expect(await page.locator(`.file-tree .tree-file[data-path="src/helpers.ts"] a`).getAttribute('title')).toBe('src/util.ts → src/helpers.ts');
  });

  it('a range and a drift show a rename as one file too', async () => {
    const sessionID = await session('renames across executions');
    const root = kit.worktree({ 'app/main.ts': lines(20), 'notes.txt': 'n\n' });
    const cap = new WorktreeCapturer();
    const e1 = await kit.runExecution(sessionID, root, cap, () => move(root, 'app/main.ts', 'app/index.ts'));
    const e2 = await kit.runExecution(sessionID, root, cap, () => write(root, 'app/index.ts', lines(20).replace('line 12 of', 'line twelve of')));
    move(root, 'notes.txt', 'NOTES.md'); // outside any execution
    const e3 = await kit.runExecution(sessionID, root, cap, () => {});

    await open(`#/session/${sessionID}/changes/${e1.id}/${e2.id}`);
    await page.locator(`${card('app/index.ts')} table.diff`).waitFor();
    expect(await page.locator('.file-card').count()).toBe(1);
    expect(await page.locator(`${card('app/index.ts')} .file-name`).innerText()).toBe('app/main.ts → app/index.ts');
    expect(await page.locator(`${card('app/index.ts')} td.code[data-kind="add"]`).allInnerTexts()).toEqual(['line twelve of the file']);

    await open(`#/execution/${e3.id}/drift`);
    await page.locator(`${card('NOTES.md')} .rename-only`).waitFor();
    expect(await page.locator('.file-card').count()).toBe(1);
    expect(await page.locator(`${card('NOTES.md')} .file-name`).innerText()).toBe('notes.txt → NOTES.md');
  });
});

describe('turns on the review page', () => {
  it('groups the executions one prompt started (one per step, as OpenCode records them) under that prompt, with the turn\'s combined changes one click away', async () => {
    const sessionID = await session('turns');
    const root = kit.worktree({ 'keep.txt': 'k\n' });
    const cap = new WorktreeCapturer();
    const step = async (text: string, edit: () => void, trigger: 'PROMPT' | 'SYNTHETIC' = 'PROMPT') => {
      const start = await cap.snapshot(host.client, sessionID, root, host.id);
      const e: any = await host.beginExecution(sessionID, trigger, { startSnapshot: start.id });
      edit();
      await host.appendText(sessionID, e.id, text);
      const end = await cap.snapshot(host.client, sessionID, root, host.id);
      await host.settleExecution(e.id, 'SUCCEEDED', { endSnapshot: end.id });
      return e.id as string;
    };
    // Turn 1: a prompt sent outside any execution, then three steps (an OpenCode turn).
    await host.appendText(sessionID, null, 'Add a greeting and a farewell, then tidy up.', 'PROMPT');
    const s1 = await step('Adding the greeting.', () => write(root, 'hello.txt', 'hello\n'));
    const s2 = await step('Changing it.', () => write(root, 'hello.txt', 'hello, world\n'));
    const s3 = await step('Adding the farewell.', () => write(root, 'bye.txt', 'bye\n'));
    // Turn 2: another prompt, one step.
    await host.appendText(sessionID, null, 'Now remove the farewell.', 'PROMPT');
    const s4 = await step('Removed it.', () => rmSync(path.join(root, 'bye.txt')));
    // Turn 3: the prompt recorded inside its execution (the reference host, Claude Code).
    const start = await cap.snapshot(host.client, sessionID, root, host.id);
    const own: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: start.id });
    await host.appendText(sessionID, own.id, 'Say hi.', 'PROMPT');
    await host.settleExecution(own.id, 'SUCCEEDED', { endSnapshot: (await cap.snapshot(host.client, sessionID, root, host.id)).id });
    // Turn 4: started by the host, not by a prompt.
    const synthetic = await step('Checked on my own.', () => {}, 'SYNTHETIC');
    // Interrupted before it recorded anything: it answered no prompt, so it is no step of the turn before it.
    const empty: any = await host.beginExecution(sessionID, 'PROMPT');
    await host.settleExecution(empty.id, 'INTERRUPTED', { interruptReason: 'USER' });

    await open(`#/session/${sessionID}`);
    await page.locator(`tr.execution-row[data-execution="${empty.id}"]`).waitFor();
    const turns = await page.locator('table.executions tbody.turn').evaluateAll((b) => b.map((x) => ({
      size: (x as HTMLElement).dataset.turnSize,
      rows: [...x.querySelectorAll('tr.execution-row')].map((r) => (r as HTMLElement).dataset.sequence),
      head: (x.querySelector('tr.turn-head') as HTMLElement).innerText,
    })));
    expect(turns).toEqual([
      { size: '1', rows: ['7'], head: 'Turn #7 · No prompt was recorded for it · 1 execution · Changes of the turn →' },
      { size: '1', rows: ['6'], head: 'Turn #6 · Started by the host (SYNTHETIC trigger), not by a prompt · 1 execution · Changes of the turn →' },
      { size: '1', rows: ['5'], head: 'Turn #5 · “Say hi.” · 1 execution · Changes of the turn →' },
      { size: '1', rows: ['4'], head: 'Turn #4 · “Now remove the farewell.” · 1 execution · Changes of the turn →' },
      { size: '3', rows: ['3', '2', '1'], head: 'Turn #1–#3 · “Add a greeting and a farewell, then tidy up.” · 3 executions · Combined changes of the turn (#1–#3) →' },
    ]);
    // Every execution row is still there, newest first.
    expect(await page.locator('tr.execution-row').evaluateAll((r) => r.map((x) => (x as HTMLElement).dataset.sequence))).toEqual(['7', '6', '5', '4', '3', '2', '1']);

    // Live: a new prompt and its execution appear as a turn of their own, its prompt read with the messages recorded since.
    await host.appendText(sessionID, null, 'One more thing.', 'PROMPT');
    const late: any = await host.beginExecution(sessionID, 'PROMPT');
    await host.appendText(sessionID, late.id, 'Done.');
    await host.settleExecution(late.id, 'SUCCEEDED');
    await page.locator(`tbody.turn[data-turn="${late.id}"] tr.turn-head`, { hasText: 'Turn #8 · “One more thing.” · 1 execution' }).waitFor();
    expect(await page.locator(`tbody.turn[data-turn="${s1}"]`).getAttribute('data-turn-size')).toBe('3');

    // One click: the turn's combined changeset (from the start of its first step to the end of its last).
    await page.click(`tbody.turn[data-turn="${s1}"] a.turn-changes`);
    await page.locator('h1.range-title', { hasText: 'Changes from execution #1 to #3' }).waitFor();
    await page.locator(`${card('hello.txt')} table.diff`).waitFor();
    expect(await page.locator('.file-card').evaluateAll((c) => c.map((x) => `${(x as HTMLElement).dataset.status} ${(x as HTMLElement).dataset.path}`)))
      .toEqual(['ADDED bye.txt', 'ADDED hello.txt']);
    expect(await page.locator(`${card('hello.txt')} td.code[data-kind="add"]`).allInnerTexts()).toEqual(['hello, world']);

    // On a step's timeline: which turn it belongs to, its steps, the combined changes.
    await open(`#/execution/${s2}`);
    const bar = page.locator('.timeline-section .turn-bar');
    await bar.waitFor();
    expect(await bar.getAttribute('data-step')).toBe('2');
    expect(await bar.innerText()).toBe('Step 2 of 3 of a turn started by the prompt “Add a greeting and a farewell, then tidy up.” (sent before #1): '
      + '#1 SUCCEEDED · #2 SUCCEEDED · #3 SUCCEEDED · Combined changes of the turn (#1–#3) →');
    expect(await bar.locator('.turn-step.current').innerText()).toBe('#2');
    // The prompt is still shown only on the execution that answered it (#1), never carried to the later steps.
    expect(await page.locator('ol.timeline li.tl-prompt').count()).toBe(0);
    await bar.locator('.turn-steps a', { hasText: '#3' }).click();
    await page.locator('.turn-bar[data-step="3"]').waitFor();
    await page.locator('.turn-bar a.turn-changes').click();
    await page.locator('h1.range-title', { hasText: 'Changes from execution #1 to #3' }).waitFor();

    // An execution alone in its turn has no bar.
    await open(`#/execution/${s4}`);
    await page.locator('ol.timeline li.tl-text').waitFor();
    expect(await page.locator('.turn-bar').count()).toBe(0);
    void s3;
  });

  it('executions of a host that records no prompt are not run together into one turn', async () => {
    const sessionID = await session('no prompts');
    for (let i = 0; i < 3; i++) {
      const e: any = await host.beginExecution(sessionID, 'PROMPT');
      await host.appendText(sessionID, e.id, `answer ${i + 1}`);
      await host.settleExecution(e.id, 'SUCCEEDED');
    }
    await open(`#/session/${sessionID}`);
    await page.locator('tr.execution-row[data-sequence="1"]').waitFor();
    expect(await page.locator('tr.turn-head').allInnerTexts()).toEqual([3, 2, 1].map((n) => `Turn #${n} · No prompt was recorded for it · 1 execution · Changes of the turn →`));
  });

  it('a turn cut by the page boundary of the executions is whole again once the older ones are loaded', async () => {
    const sessionID = await session('a long turn');
    await host.appendText(sessionID, null, 'One prompt, many steps.', 'PROMPT');
    const ids: string[] = [];
    for (let i = 0; i < 22; i++) {
      const e: any = await host.beginExecution(sessionID, 'PROMPT');
      await host.appendText(sessionID, e.id, `step ${i + 1}`);
      await host.settleExecution(e.id, 'SUCCEEDED');
      ids.push(e.id);
    }
    await open(`#/session/${sessionID}`);
    await page.locator('tr.execution-row').nth(19).waitFor();
    // The oldest executions are not read yet: the turn is not claimed to start at #3.
    expect(await page.locator('tbody.turn').count()).toBe(1);
    expect(await page.locator('tr.turn-head').innerText()).toBe('Turn #3–#22 · continues a turn of older executions (load them below) · 20 executions · Combined changes of the turn (#3–#22) →');
    await page.click('button.more:has-text("Older executions")');
    await page.locator('tr.execution-row[data-sequence="1"]').waitFor();
    expect(await page.locator('tbody.turn').count()).toBe(1);
    expect(await page.locator('tr.turn-head').innerText()).toBe('Turn #1–#22 · “One prompt, many steps.” · 22 executions · Combined changes of the turn (#1–#22) →');

    await open(`#/execution/${ids[0]}`);
    await page.locator('.turn-bar').waitFor();
    expect(await page.locator('.turn-bar').getAttribute('data-step')).toBe('1');
    expect(await page.locator('.turn-bar').innerText()).toContain('Step 1 of 22 of a turn started by the prompt “One prompt, many steps.”: #1 SUCCEEDED');
  });
});
