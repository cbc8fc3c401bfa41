import { afterAll, beforeAll, expect, it } from 'vitest';
import { runDemo, type DemoResult } from '../host/demo.js';
import { startTestGateway, type TestGateway } from './harness.js';
import { openBrowser, screenshot, setEditor } from './support/browser.js';

/**
 * The demo against a real gateway: it captures real boundary snapshots, so the
 * query it prints shows one changeset with patches and CoverageComplete and one with an IGNORED
 * omission; the same query in GraphiQL is screenshotted.
 */
let g: TestGateway;
let demo: DemoResult;
const printed: string[] = [];

beforeAll(async () => {
  g = await startTestGateway();
  demo = await runDemo(['--url', g.url], (l) => printed.push(l), { GATEWAY_TOKEN: g.admin });
}, 120_000);

afterAll(async () => { await g?.stop(); });

it('prints a query whose answer shows a changeset with patches and CoverageComplete, and one with an omission', async () => {
  const text = printed.join('\n');
  expect(text).toContain(demo.query);
  const r = await g.gql(demo.query);
  expect(r.errors).toBeUndefined();
  const { changed, omitted, session } = r.data;

  expect(changed.status).toBe('SUCCEEDED');
  expect(changed.changeset.coverage.__typename).toBe('CoverageComplete');
  const files = Object.fromEntries(changed.changeset.files.map((f: any) => [f.path, f]));
  expect(Object.keys(files).sort()).toEqual(['greeting.txt', 'notes.md']);
  expect(files['greeting.txt']).toMatchObject({ status: 'MODIFIED', additions: 1, deletions: 1 });
  expect(files['greeting.txt'].patch).toContain('-hello\n+hello, world');
  expect(files['notes.md'].status).toBe('ADDED');

  expect(omitted.status).toBe('FAILED');
  expect(omitted.changeset.coverage).toEqual({ __typename: 'CoverageOmitted', omissions: [{ path: 'build.log', reason: 'IGNORED' }] });
  expect(omitted.changeset.files.map((f: any) => f.path)).toEqual(['greeting.txt']);
  expect(omitted.changeset.files[0].patch).toContain('+hello, world!');
  // The user's edit between executions 1 and 2: in neither changeset, but in the drift before 2 and in the range.
  expect(omitted.driftBefore.files.map((f: any) => [f.path, f.status])).toEqual([['README.md', 'MODIFIED']]);
  expect(omitted.driftBefore.files[0].patch).toContain('+The user added this line between two executions.');
  expect(session.changes.coverage.__typename).toBe('CoverageOmitted');
  expect(session.changes.files.map((f: any) => f.path)).toEqual(['README.md', 'greeting.txt', 'notes.md']);

  // What docs/review.md says it creates: a session with a child, three executions of the root (succeeded, failed
  // with a failing job, interrupted), the child's one; every boundary captured, so no coverage is unknown.
  expect(session.children.edges.map((e: any) => e.node.id)).toEqual([demo.childID]);
  const executions = session.executions.edges.map((e: any) => e.node).sort((a: any, b: any) => a.sequence - b.sequence);
  expect(executions.map((e: any) => e.status)).toEqual(['SUCCEEDED', 'FAILED', 'INTERRUPTED']);
  expect(executions[1].jobs.edges[0].node).toMatchObject({ title: 'failing build', exitCode: 3 });
  const third = await g.gql(`{ execution(id: "${demo.interruptedID}") { boundary { __typename } driftBefore { fileCount coverage { __typename } } changeset { fileCount coverage { __typename } } } }`);
  expect(third.data.execution).toEqual({
    boundary: { __typename: 'SnapshotBoundary' },
    driftBefore: { fileCount: 0, coverage: { __typename: 'CoverageComplete' } },
    changeset: { fileCount: 0, coverage: { __typename: 'CoverageComplete' } },
  });
  const child = await g.gql(`{ execution(id: "${demo.childID}") { id } session(id: "${demo.childID}") { executions { edges { node { status changeset { fileCount coverage { __typename } } } } } } }`);
  expect(child.data.session.executions.edges[0].node).toEqual({ status: 'SUCCEEDED', changeset: { fileCount: 0, coverage: { __typename: 'CoverageComplete' } } });
});

it('prints the review page\'s address of its session, which opens that session once signed in, with nothing unknown', async () => {
  const text = printed.join('\n');
  const printedURL = /Review the session in a browser \(sign in with the token\): (\S+)/.exec(text)?.[1];
  expect(printedURL).toBe(`${new URL(g.url).origin}/review/#/session/${demo.sessionID}`);
  expect(demo.reviewURL).toBe(printedURL);
  const { browser, page, offsite } = await openBrowser(new URL(g.url).origin);
  try {
    await page.goto(printedURL!);
    await page.locator('form.sign-in').waitFor({ timeout: 60_000 }); // the first request may build the page
    await page.fill('#token', g.admin);
    await page.click('form.sign-in button[type=submit]');
    await page.locator('h1', { hasText: 'Demo: fix the greeting' }).waitFor();
    for (const id of [demo.changedID, demo.omittedID, demo.interruptedID]) await page.locator(`tr.execution-row[data-execution="${id}"]`).waitFor();
    expect(page.url()).toBe(printedURL);
    // Every execution's changes are known: no "unknown" count, no unknown drift.
    expect(await page.locator('.changes-unknown').count()).toBe(0);
    expect(await page.locator('tr.drift-unknown').count()).toBe(0);
    expect(await page.locator('main').innerText()).not.toContain('NOT_CAPTURED');
    await screenshot(page, 'demo', 'review-session');
    expect(offsite).toEqual([]);
  } finally {
    await browser.close();
  }
});

it('the printed query in GraphiQL (screenshot)', async () => {
  const { browser, page, offsite } = await openBrowser(new URL(g.url).origin);
  try {
    await page.goto(g.url);
    await page.getByText('Headers', { exact: true }).click();
    await setEditor(page, 'headers', JSON.stringify({ Authorization: `Bearer ${g.admin}` }));
    await setEditor(page, 'query', demo.query.replace(/\s+/g, ' '));
    await page.keyboard.press('Shift+Control+P'); // prettify
    await page.locator('.graphiql-execute-button').click();
    await page.locator('.graphiql-response').getByText('CoverageComplete').waitFor({ timeout: 20_000 });
    await screenshot(page, 'demo', 'changeset-query');
    expect(offsite).toEqual([]);
  } finally {
    await browser.close();
  }
});
