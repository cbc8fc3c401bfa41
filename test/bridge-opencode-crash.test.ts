// The bridge killed (SIGKILL) right after each kind of gateway mutation, before it could record the
// answer: on restart it replays the OpenCode events after its stored cursor and must not create
// anything twice (idempotency keys), nor stall on calls that already landed (settle, finish).
// Real processes: the bridge runs as `gateway bridge opencode` in a child process, OpenCode is the real
// server, the gateway runs in process.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import git from 'isomorphic-git';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { OpencodeClient } from '../bridge/opencode/client.js';
import { findOpencodeBinary, startOpencode, type OpencodeServer } from '../bridge/opencode/launch.js';
import { startScriptedModel, type ScriptedModel, type ScriptStep } from '../bridge/opencode/scripted-model.js';
import { promptAsync, until } from './support/opencode-kit.js';

const bin = findOpencodeBinary();
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

interface BridgeProcess { exited: Promise<{ killed: boolean; code: number | null }>; stop(): Promise<void>; logs: string[] }

describe.skipIf(!bin)('OpenCode bridge killed between a gateway mutation and its own bookkeeping', { timeout: 900_000 }, () => {
  let gw: TestGateway;
  let model: ScriptedModel;
  let oc: OpencodeServer;
  let client: OpencodeClient;
  let tmp: string;
  let project: string;
  let ocSession: string;

  function runBridge(crashAfter: string | null): BridgeProcess {
    // DATABASE_URL set as a gateway install would have it: the bridge must not use it (its state is its own file).
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: gw.dbUrl, GATEWAY_TOKEN: gw.admin };
    delete env.BRIDGE_CRASH_AFTER;
    // Steps applied after the fact are never observed in the worktree here (however soon the bridge comes
    // back): the first turn is checked as read from history.
    env.BRIDGE_OBSERVE_WINDOW_MS = '0';
    if (crashAfter) env.BRIDGE_CRASH_AFTER = crashAfter;
    const p = spawn(TSX, [path.join(ROOT, 'cli', 'main.ts'), 'bridge', 'opencode', '--url', oc.url, '--gateway', gw.url,
      '--opencode-data', oc.dataDir, '--state', path.join(tmp, 'bridge-state.json'), '--lease-ms', '600000'], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const logs: string[] = [];
    p.stdout!.on('data', (d) => logs.push(String(d)));
    p.stderr!.on('data', (d) => logs.push(String(d)));
    // A 10-minute lease: however loaded the machine, a killed bridge's successor registers again before
    // the lease lapses (a lapsed lease abandons the running execution: test/bridge-opencode.test.ts checks
    // that; here every execution must end SUCCEEDED, which only idempotent replays give).
    // tsx runs the CLI in a child of its own and exits 137 when that child is killed.
    const exited = new Promise<{ killed: boolean; code: number | null }>((resolve) =>
      p.on('exit', (code, signal) => resolve({ killed: signal === 'SIGKILL' || code === 137, code })));
    return {
      exited, logs,
      async stop() {
        if (p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
        await exited;
      },
    };
  }

  const prompt = async (steps: ScriptStep[]) => (await promptAsync(client, ocSession, steps))();

  /** What the gateway holds for the OpenCode session (every gateway session that claims to mirror it). */
  async function mirrored() {
    const sessions = await gw.sql`SELECT id FROM sessions WHERE host_metadata->'opencode'->>'sessionID' = ${ocSession}`;
    const ids = sessions.map((s) => s.id as string);
    const [c] = await gw.sql`SELECT
      (SELECT count(*)::int FROM executions WHERE session_id = ANY(${ids})) AS executions,
      (SELECT count(*)::int FROM executions WHERE session_id = ANY(${ids}) AND status = 'RUNNING') AS running,
      (SELECT count(*)::int FROM messages WHERE session_id = ANY(${ids})) AS messages,
      (SELECT count(*)::int FROM jobs WHERE session_id = ANY(${ids})) AS jobs,
      (SELECT count(*)::int FROM jobs WHERE session_id = ANY(${ids}) AND status IN ('RUNNING', 'CANCELLING')) AS unfinished`;
    return { sessions: ids.length, ...c };
  }

  /** What OpenCode holds: one gateway message per OpenCode message, one execution per step, one job per shell call. */
  async function expected() {
    const msgs = await client.messages(ocSession);
    const steps = msgs.filter((m) => m.info.role === 'assistant');
    const shells = steps.flatMap((m) => m.parts).filter((p: any) => p.type === 'tool' && p.tool === 'bash');
    return { sessions: 1, executions: steps.length, running: 0, messages: msgs.length, jobs: shells.length, unfinished: 0 };
  }

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-crash-'));
    project = path.join(tmp, 'project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'a.txt'), 'one\n');
    await git.init({ fs, dir: project });
    model = await startScriptedModel();
    oc = await startOpencode({ bin: bin!, directory: project, home: path.join(tmp, 'oc'), modelUrl: model.url });
    client = new OpencodeClient(oc.url);
    gw = await startTestGateway();
  }, 240_000);

  afterAll(async () => {
    await oc?.stop().catch(() => {});
    await model?.close().catch(() => {});
    await gw?.stop().catch(() => {});
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('replays history after a kill at every mutation and ends with exactly one copy of everything', async () => {
    // History made while no bridge runs: the bridge backfills it, dying once per kind of mutation.
    ocSession = (await client.createSession({ title: 'crashy' })).id;
    await prompt([
      { tool: 'write', args: { filePath: path.join(project, 'b.txt'), content: 'bee\n' } },
      { tool: 'bash', args: { command: 'echo hi > c.txt', description: 'write c' } },
      { text: 'first turn done' },
    ]);
    const kills = ['createSession', 'beginExecution', 'createSnapshot', 'startJob', 'finishJob', 'appendMessage', 'settleExecution'];
    for (const at of kills) {
      const b = runBridge(at);
      const end = await Promise.race([b.exited, new Promise<null>((r) => setTimeout(() => r(null), 180_000))]);
      if (!end) await b.stop();
      expect(end, `bridge killed after ${at}\n${b.logs.join('').slice(-3000)}`).toMatchObject({ killed: true });
    }
    // The bridge that survives, then a live turn during which it dies after appending a message.
    let b = runBridge(null);
    const want1 = await expected();
    await until('history mirrored', async () => JSON.stringify(await mirrored()) === JSON.stringify(want1) || null, 180_000)
      .catch(async (e) => { throw new Error(`${e.message}\nhave ${JSON.stringify(await mirrored())}, want ${JSON.stringify(want1)}\n${b.logs.join('').slice(-3000)}`); });
    await b.stop();
    b = runBridge('appendMessage');
    await until('bridge following', async () => b.logs.join('').includes('bridging OpenCode') || null, 180_000);
    await prompt([{ tool: 'bash', args: { command: 'echo again >> c.txt', description: 'append c' } }, { text: 'second turn done' }]);
    expect(await b.exited).toMatchObject({ killed: true });
    b = runBridge(null);
    try {
      const want = await expected();
      await until('live turn mirrored', async () => JSON.stringify(await mirrored()) === JSON.stringify(want) || null, 180_000)
        .catch(async (e) => { throw new Error(`${e.message}\nhave ${JSON.stringify(await mirrored())}, want ${JSON.stringify(want)}\n${b.logs.join('').slice(-3000)}`); });
      // Nothing more arrives later either (a duplicate would show up as a count above the expected one):
      // stopped cleanly (what it was doing is done) and started again, the bridge has nothing to replay.
      await b.stop();
      b = runBridge(null);
      await until('restarted bridge caught up', async () => /backfill: 0 events/.test(b.logs.join('')) || null, 120_000);
      expect(await mirrored()).toEqual(want);
      // Every execution settled, with the files of its step.
      const rows = await gw.sql`
        SELECT e.status, coalesce(jsonb_agg(f.path ORDER BY f.path) FILTER (WHERE f.path IS NOT NULL), '[]'::jsonb) AS files
        FROM executions e JOIN sessions s ON s.id = e.session_id
        LEFT JOIN changeset_files f ON f.session_id = e.session_id AND f.execution_id = e.id
        WHERE s.host_metadata->'opencode'->>'sessionID' = ${ocSession}
        GROUP BY e.session_id, e.id, e.status, e.sequence ORDER BY e.sequence`;
      expect(rows.map((r) => r.status)).toEqual(Array(want.executions).fill('SUCCEEDED'));
      expect(rows.map((r) => r.files)).toEqual([['b.txt'], ['c.txt'], [], ['c.txt'], []]);
      // The first turn was read from OpenCode's history, where what OpenCode's capture skipped cannot be
      // known: its changesets list their files but never read complete.
      const coverage = await gw.sql`SELECT c.coverage, c.omissions FROM changesets c JOIN executions e ON e.session_id = c.session_id AND e.id = c.execution_id
        JOIN sessions s ON s.id = e.session_id WHERE s.host_metadata->'opencode'->>'sessionID' = ${ocSession} ORDER BY e.sequence LIMIT 3`;
      for (const c of coverage) {
        expect(c.coverage).toBe('OMITTED');
        expect(c.omissions).toEqual([expect.objectContaining({ path: '.', reason: 'CAPTURE_LIMIT', detail: expect.stringContaining('read from its history') })]);
      }
    } finally {
      await b.stop();
    }
  });

  it('a CREATE_SESSION redelivered after the bridge died between creating the OpenCode child and its reply creates no second child', async () => {
    const [parent] = await gw.sql`SELECT id FROM sessions WHERE host_metadata->'opencode'->>'sessionID' = ${ocSession}`;
    const childrenBefore = (await client.children(ocSession)).length;
    let b = runBridge('opencode:createSession');
    await until('bridge following', async () => b.logs.join('').includes('bridging OpenCode') || null, 180_000);
    // The plugin's createSession waits for the host's reply (long enough for a restart).
    const created = gw.gql(`mutation($i: CreateSessionInput!) { createSession(input: $i) { __typename
      ... on Session { id parentID title metadata } ... on Error { message } } }`,
    { i: { parentID: parent.id, title: 'child of a crash', metadata: { ticket: 12 }, timeoutMs: 120_000 } });
    // Killed right after OpenCode created the child, before anything was recorded or replied.
    expect(await b.exited, b.logs.join('').slice(-3000)).toMatchObject({ killed: true });
    const made = (await client.children(ocSession)).filter((c) => c.title === 'child of a crash');
    expect(made.length).toBe(1);
    b = runBridge(null);
    try {
      const r = await created;
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      const child = r.data.createSession;
      expect(child, `${JSON.stringify(r)}\n${b.logs.join('').slice(-3000)}`).toMatchObject({ __typename: 'Session', parentID: parent.id, title: 'child of a crash' });
      expect(child.metadata).toMatchObject({ ticket: 12, opencode: { sessionID: made[0].id, parentID: ocSession } });
      // Exactly one child in OpenCode (the one made before the crash), mirrored exactly once.
      const children = await client.children(ocSession);
      expect(children.length).toBe(childrenBefore + 1);
      expect(children.filter((c) => c.title === 'child of a crash').map((c) => c.id)).toEqual([made[0].id]);
      await until('child mirrored once', async () => {
        const rows = await gw.sql`SELECT id FROM sessions WHERE host_metadata->'opencode'->>'sessionID' = ${made[0].id}`;
        return rows.length === 1 && rows[0].id === child.id;
      }, 30_000);
      // Delivered once more (no acknowledgement seen): still the same child, nothing new.
      expect((await client.children(ocSession)).length).toBe(childrenBefore + 1);
    } finally {
      await b.stop();
    }
  });
});
