import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { SYSTEM } from '../domain/access.js';
import { correctMessagePart, retractMessage } from '../domain/corrections.js';
import { appendMessage } from '../domain/messages.js';
import { createSession } from '../domain/sessions.js';

let g: TestGateway;
beforeAll(async () => { g = await startTestGateway(); });
afterAll(async () => { await g?.stop(); });

const exec = promisify(execFile);

async function projections() {
  const [r] = await g.sql`SELECT
    (SELECT coalesce(jsonb_agg(to_jsonb(m) ORDER BY m.id), '[]') FROM messages m) AS messages,
    (SELECT coalesce(jsonb_agg(to_jsonb(p) ORDER BY p.id), '[]') FROM parts p) AS parts`;
  return r;
}

it('`gateway replay --verify` reports a damaged projection; `gateway replay` repairs it from the journal', async () => {
  const s = await createSession(g.sql, SYSTEM, { directory: '/w' });
  const a = await appendMessage(g.sql, SYSTEM, { sessionID: s.id, role: 'USER', origin: 'SYNTHETIC', parts: [{ type: 'TEXT', text: 'notice' }] });
  const b = await appendMessage(g.sql, SYSTEM, { sessionID: s.id, role: 'ASSISTANT', origin: 'MODEL', parts: [{ type: 'TEXT', text: 'secret' }, { type: 'TOOL', tool: 'bash', input: { cmd: 'ls' } }] });
  const [pa] = await g.sql`SELECT id FROM parts WHERE message_id = ${a.id}`;
  await correctMessagePart(g.sql, SYSTEM, { messageID: a.id, partID: pa.id, text: 'notice, corrected' });
  await retractMessage(g.sql, SYSTEM, { messageID: b.id, reason: 'leaked' });
  const before = await projections();

  // Damage: the retracted content comes back and a correction is undone.
  await g.sql`UPDATE parts SET text = 'secret' WHERE message_id = ${b.id} AND index = 0`;
  await g.sql`UPDATE parts SET text = 'notice', revision = 1 WHERE id = ${pa.id}`;

  // The child gets this test's database explicitly (never the embedded default).
  const env = { ...process.env, DATABASE_URL: g.dbUrl };
  const cli = (...args: string[]) => exec(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], { env });
  const verify = await cli('replay', '--verify').then(() => null, (e) => e);
  expect(verify?.code).toBe(1);
  expect(verify.stdout).toContain(`differs: parts ${pa.id}`);
  expect(verify.stderr).toContain('2 rows differ');
  expect(await g.sql`SELECT 1 FROM pg_namespace WHERE nspname = 'replay_check'`).toHaveLength(0);

  const fixed = await cli('replay');
  expect(fixed.stdout).toContain('rebuilt from 5 events of 1 sessions: 1 sessions, 0 session_children, 0 executions, 0 model_calls, 0 jobs, 2 messages, 3 parts, 0 compactions, 0 review_comments, 0 tombstones (rows deleted 0, updated 2, inserted 0)');
  expect(await projections()).toEqual(before);
});
