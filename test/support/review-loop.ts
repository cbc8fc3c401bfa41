// GraphQL documents of the review-loop tests (test/review-loop-*.test.ts): a reviewer's comment on a line of an
// execution's changeset, the send to the agent, and what the reviewer reads back; the same loop on the review page.
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { ensureReviewBuilt } from '../../server/review.js';
import { PROJECT_DIR } from '../../db/index.js';
import { TEST_OUTPUT } from './browser.js';
export const COMMENT_FIELDS = `id state body sentAt sentCommandID answeredBy { id }
  anchor { kind executionID path side line startLine quote }`;

export const ADD_COMMENT = `mutation($i: AddReviewCommentInput!) { addReviewComment(input: $i) { __typename
  ... on ReviewComment { ${COMMENT_FIELDS} } ... on Error { message } } }`;

export const SEND_COMMENTS = `mutation($i: SendReviewCommentsInput!) { sendReviewComments(input: $i) { __typename
  ... on ReviewCommentsSent { commandID prompt execution { id status } comments { id } } ... on Error { message } } }`;

export const COMMENT_Q = `query($id: ID!) { reviewComment(id: $id) { ${COMMENT_FIELDS} } }`;

export const EXECUTION_Q = `query($id: ID!) { execution(id: $id) { id status interruptReason
  changeset { files { path status patch } comments { id answeredBy { id } } } } }`;

/**
 * The loop's screenshots: test-output/review-loop (ignored by git); REVIEW_LOOP_SCREENSHOTS=docs/screenshots/review-loop
 * renews the committed ones (the closing note shows them).
 */
export const LOOP_SHOTS = process.env.REVIEW_LOOP_SCREENSHOTS
  ? path.resolve(PROJECT_DIR, process.env.REVIEW_LOOP_SCREENSHOTS) : path.join(TEST_OUTPUT, 'review-loop');

/**
 * A reviewer's loop on the review page, in Chromium: the execution's changeset, the "+" on line `line` (new side) of
 * `file`, the comment `body`, selected and sent to the agent ("Send 1 comment to the agent"); answers once the page
 * says the comment was answered by execution #`answerSequence` (`settled` waits for that execution to end), then
 * follows that link to the answering execution's changeset of the file and answers its deleted and added lines.
 * Screenshots `<agent>-1…3` in LOOP_SHOTS.
 */
export async function reviewOnPage(o: {
  gatewayUrl: string; token: string; executionID: string; file: string; line: number; body: string; agent: string;
  answerSequence: number; settled: () => Promise<unknown>;
}): Promise<{ del: string[]; add: string[] }> {
  fs.mkdirSync(LOOP_SHOTS, { recursive: true });
  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(LOOP_SHOTS, `${o.agent}-${name}`), fullPage: false });
  await ensureReviewBuilt();
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(60_000);
    page.on('pageerror', (e) => console.error('page error:', e));
    const base = o.gatewayUrl.replace(/\/graphql$/, '');
    await page.goto(`${base}/review/`);
    await page.evaluate((t) => sessionStorage.setItem('gateway.review.token', t), o.token);
    await page.goto(`${base}/review/#/execution/${o.executionID}`);
    const f = `.file-card[data-path="${o.file}"]`;
    await page.locator(`${f} table.diff`).waitFor();
    await page.locator('#live[data-state="connected"]').waitFor();
    // The reviewer's "+" on the line, the comment, its thread at that line.
    const row = page.locator(`${f} tr.ln`, { has: page.locator(`td.num[data-line="R${o.line}"]`) });
    await row.hover();
    await row.locator(`button.add-comment[data-side="NEW"][data-line="${o.line}"]`).click();
    await page.locator(`${f} form.comment-composer textarea`).fill(o.body);
    await page.locator(`${f} form.comment-composer button.comment-submit`).click();
    const thread = page.locator(`${f} .thread[data-line="${o.line}"]`);
    await thread.waitFor();
    await shot(page, '1-comment-on-a-line.png');
    // Selected and sent to the agent.
    await thread.locator('input.send-select').check();
    await page.locator('.review-comments button.send-comments').click();
    const status = page.locator('.review-comments .send-status.sent');
    await status.waitFor();
    expect(await status.innerText()).toBe(`Sent 1 comment: execution #${o.answerSequence} started to answer them.`);
    const answered = thread.locator('.answered');
    await answered.waitFor();
    expect(await answered.innerText()).toBe(`\u2714 answered by execution #${o.answerSequence}`);
    await o.settled();
    await shot(page, '2-answered.png');
    // One click: the answering execution's changeset of the file.
    await answered.locator('a').click();
    await page.locator('h1', { hasText: `Execution #${o.answerSequence}` }).waitFor();
    await page.locator(`${f}.focused table.diff`).waitFor();
    const del = await page.locator(`${f} td.code[data-kind="del"]`).allInnerTexts();
    const add = await page.locator(`${f} td.code[data-kind="add"]`).allInnerTexts();
    await shot(page, '3-the-answer-changeset.png');
    return { del, add };
  } finally {
    await browser.close();
  }
}
