// The typed client's examples (client/examples/, shown in client/README.md) run as a user runs them, as
// processes against a real gateway: a review UI's reads, a plugin's seal with its errors handled, and an
// analytics tool that, stopped and started again, goes on from its saved cursor: nothing missed, nothing twice.
// They import '@agent-history/client' from its sources (tsx, with the package name mapped to client/index.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_DIR } from '../db/index.js';
import { begin, createSession, registerHost, settle } from './fixtures.js';
import { onFeed, startTestGateway, type TestGateway } from './harness.js';
import { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { until } from './support/until.js';

let g: TestGateway;
let tmp: string;
let tsconfig: string;

beforeAll(async () => {
  g = await startTestGateway();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'client-examples-'));
  tsconfig = path.join(tmp, 'tsconfig.json');
  fs.writeFileSync(tsconfig, JSON.stringify({ compilerOptions: { baseUrl: PROJECT_DIR, paths: { '@agent-history/client': ['client/index.ts'] } } }));
});
afterAll(async () => {
  await g?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const env = (token: string, more: Record<string, string> = {}) => ({ ...process.env, GATEWAY_URL: g.url, GATEWAY_TOKEN: token, ...more });
const tsx = (example: string, args: string[] = []) => ['--import', 'tsx', path.join(PROJECT_DIR, 'client/examples', example), ...args];

/** Runs an example to its end (not spawnSync: the gateway answering it runs in this process). */
async function run(example: string, token: string, args: string[] = []): Promise<{ status: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, tsx(example, args), { cwd: PROJECT_DIR, env: { ...env(token), TSX_TSCONFIG_PATH: tsconfig }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b) => { out += b; });
  child.stderr.on('data', (b) => { err += b; });
  const status = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  return { status, out, err };
}

describe('the examples of client/README.md', () => {
  it('review-reads.ts lists the sessions with their executions, in words: a file or several, and changes unknown when no boundary was captured (never "0 files")', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { title: 'Reviewed session', directory: '/examples' });
    const e = await begin(g, host, s.id);
    await settle(g, host, e.id);
    // A session whose executions were captured: one file changed, then nothing.
    const root = fs.mkdtempSync(path.join(tmp, 'worktree-'));
    const reference = new ReferenceHost({ url: g.url, token: await g.token('host'), leaseMs: 600_000 });
    await reference.start();
    const cap = new WorktreeCapturer();
    const captured = await createSession(g, { title: 'Captured session', directory: '/examples' });
    try {
      for (const change of [() => fs.writeFileSync(path.join(root, 'app.ts'), 'export const a = 1;\n'), () => {}]) {
        const x: any = await reference.beginExecution(captured.id, 'PROMPT', { startSnapshot: (await cap.snapshot(reference.client, captured.id, root, reference.id)).id });
        change();
        await reference.settleExecution(x.id, 'SUCCEEDED', { endSnapshot: (await cap.snapshot(reference.client, captured.id, root, reference.id)).id });
      }
    } finally {
      await cap.close();
      await reference.stop();
    }
    const r = await run('review-reads.ts', await g.token('reader'));
    expect(r.status, r.err).toBe(0);
    expect(r.out).toContain(`${s.id} IDLE Reviewed session (/examples)\n  #1 SUCCEEDED: changes unknown (BOUNDARY_UNAVAILABLE)\n`);
    expect(r.out).toContain(`${captured.id} IDLE Captured session (/examples)\n  #2 SUCCEEDED: no files changed\n  #1 SUCCEEDED: 1 file +1 -0\n    ADDED app.ts\n`);
    expect(r.out).not.toMatch(/\b0 files|\b1 files/);
  }, 60_000);

  it('seal.ts seals an idle session, and tells a missing one by its error', async () => {
    const plugin = await g.token('plugin');
    const s = await createSession(g, { title: 'To seal', directory: '/examples' });
    const sealed = await run('seal.ts', plugin, [s.id]);
    expect(sealed.status, sealed.err).toBe(0);
    expect(sealed.out).toMatch(/^sealed at \S+; 0 jobs cancelled$/m);
    const missing = await run('seal.ts', plugin, ['ses_missing']);
    expect(missing.status, missing.err).toBe(0);
    expect(missing.out.trim()).toBe('no session ses_missing (or not in this token\'s directory)');
  });

  it('review-comments.ts comments on the TODO lines an execution added and sends them: the agent\'s next execution answers them', async () => {
    const root = fs.mkdtempSync(path.join(tmp, 'worktree-'));
    const prompts: string[] = [];
    const host = new ReferenceHost({ url: g.url, token: await g.token('host'), leaseMs: 600_000, capabilities: { prompt: true }, onPrompt: async (t) => { prompts.push(t.text); } });
    await host.start();
    const cap = new WorktreeCapturer();
    try {
      const s = await createSession(g, { title: 'Reviewed by a plugin', directory: '/examples' });
      const start = await cap.snapshot(host.client, s.id, root, host.id);
      const e: any = await host.beginExecution(s.id, 'PROMPT', { startSnapshot: start.id });
      fs.writeFileSync(path.join(root, 'app.ts'), 'export function main() {\n  // TODO: handle errors\n  return 1;\n}\n');
      const end = await cap.snapshot(host.client, s.id, root, host.id);
      await host.settleExecution(e.id, 'SUCCEEDED', { endSnapshot: end.id });
      const r = await run('review-comments.ts', await g.token('plugin'), [e.id]);
      expect(r.status, r.err).toBe(0);
      expect(r.out).toMatch(/^sent 1 comment; the agent answers in execution #2 \(exe_\w+\)$/m);
      // The send answers once the agent's execution began; the agent is handed the prompt just after.
      await until('the agent handed the prompt', () => prompts.length > 0);
      expect(prompts).toEqual(['Review comments on your changes (1):\n\n1. app.ts, line 2 (new):\n   >   // TODO: handle errors\n   Finish this TODO before we merge.\n']);
      // A reader's token may read the changeset but not comment on it: the example fails (FORBIDDEN).
      const denied = await run('review-comments.ts', await g.token('reader'), [e.id]);
      expect(denied.status).not.toBe(0);
    } finally {
      await cap.close();
      await host.stop();
    }
  }, 60_000);

  it('analytics.ts, stopped and started again, goes on from its saved cursor: nothing missed, nothing twice', async () => {
    const reader = await g.token('reader');
    const cursorFile = path.join(tmp, 'settled.cursor');
    const host = await registerHost(g);
    const s = await createSession(g, { title: 'Analysed', directory: '/examples' });
    const start = () => {
      const child = spawn(process.execPath, tsx('analytics.ts'), { cwd: PROJECT_DIR, env: { ...env(reader, { CURSOR_FILE: cursorFile }), TSX_TSCONFIG_PATH: tsconfig }, stdio: ['ignore', 'pipe', 'pipe'] });
      const lines: { executionID: string }[] = [];
      let err = '';
      child.stdout!.on('data', (b: Buffer) => { for (const l of String(b).split('\n').filter(Boolean)) lines.push(JSON.parse(l)); });
      child.stderr!.on('data', (b: Buffer) => { err += b; });
      const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
      return { child, lines, err: () => err, exited };
    };
    const stop = async (p: { child: ChildProcess; exited: Promise<number | null> }) => { p.child.kill('SIGTERM'); return p.exited; };

    const first = start();
    // Subscribed (after the log's head: it read it first) once the feed has its subscriber.
    await onFeed(() => g.app.gateway.settlements.subscribers, 1, 60_000);
    const e1 = await begin(g, host, s.id);
    await settle(g, host, e1.id);
    await expect.poll(() => first.lines.map((l) => l.executionID), { timeout: 20_000 }).toEqual([e1.id]);
    expect(await stop(first)).toBe(0);
    await onFeed(() => g.app.gateway.settlements.subscribers, 0);

    // Settled while the tool is not running.
    const e2 = await begin(g, host, s.id);
    await settle(g, host, e2.id);

    const second = start();
    try {
      await expect.poll(() => second.lines.map((l) => l.executionID), { timeout: 30_000 }).toEqual([e2.id]);
      const e3 = await begin(g, host, s.id);
      await settle(g, host, e3.id);
      await expect.poll(() => second.lines.map((l) => l.executionID), { timeout: 20_000 }).toEqual([e2.id, e3.id]);
      expect(second.err()).toBe('');
    } finally {
      expect(await stop(second)).toBe(0);
    }
  }, 120_000);
});
