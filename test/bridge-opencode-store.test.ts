// The OpenCode bridge's own state file (bridge/opencode/store.ts): an fsynced log of JSON lines,
// compacted atomically; what a restarted bridge reads back after a clean stop or a crash.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileBridgeStore } from '../bridge/opencode/store.js';
import { emptyState } from '../bridge/opencode/mapping.js';
import { runBridgeCommand } from '../bridge/opencode/cli.js';
import { createTestDatabase } from './harness.js';
import { connect } from '../db/connection.js';
import { migrate } from '../db/migrate.js';

const dirs: string[] = [];
const file = () => { const d = fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-store-')); dirs.push(d); return path.join(d, 'state', 'bridge.json'); };
afterEach(() => { for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });
const row = (oc: string, lastSeq: number) => ({ ocSessionID: oc, sessionID: `gw_${oc}`, lastSeq, state: { ...emptyState(), title: `t${lastSeq}` } });
const msg = (id: string, oc: string) => ({ messageID: id, sessionID: 'gw_a', ocSessionID: 'a', ocMessageID: oc, parts: { p1: `prt_${id}` } });

describe('FileBridgeStore', () => {
  it('reads back what was written, the latest row of each session, across a reopen', async () => {
    const f = file();
    const s = new FileBridgeStore(f);
    expect(s.empty).toBe(true);
    await s.setHostID('host_1');
    for (let i = 0; i < 5; i++) await s.saveSession(row('a', i));
    await s.saveSession(row('b', 0));
    await s.saveMessage(msg('m1', 'msg_1'));
    await s.saveMessage({ ...msg('m1', 'msg_other'), parts: {} }); // a message is recorded once
    await s.close();
    const t = new FileBridgeStore(f);
    expect(t.empty).toBe(false);
    expect(await t.hostID()).toBe('host_1');
    expect((await t.sessions()).sort((x, y) => x.ocSessionID.localeCompare(y.ocSessionID))).toEqual([row('a', 4), row('b', 0)]);
    expect(await t.message('m1')).toEqual(msg('m1', 'msg_1'));
    expect(await t.messageByOc('msg_1')).toEqual(msg('m1', 'msg_1'));
    expect(await t.messageByOc('msg_other')).toBeNull();
  });

  it('a crash mid-append loses only that unacknowledged line; a damaged file is refused, never overwritten', async () => {
    const f = file();
    const s = new FileBridgeStore(f);
    await s.saveSession(row('a', 1));
    await s.close();
    fs.appendFileSync(f, '{"t":"session","s":{"ocSessionID":"a","sessio');
    const t = new FileBridgeStore(f);
    expect(await t.sessions()).toEqual([row('a', 1)]);
    await t.saveSession(row('a', 2)); // appended after the torn tail was dropped
    await t.close();
    expect((await new FileBridgeStore(f).sessions())).toEqual([row('a', 2)]);
    const bad = fs.readFileSync(f, 'utf8').replace('"t":"session"', '"t":"sess');
    fs.writeFileSync(f, `${bad}{"t":"host","id":"h"}\n`);
    expect(() => new FileBridgeStore(f)).toThrow(/damaged at line 1/);
    expect(fs.readFileSync(f, 'utf8')).toContain('"t":"sess');
  });

  it('a forgotten row stays forgotten across a reopen and a compaction; a row saved again after it is back', async () => {
    const f = file();
    const s = new FileBridgeStore(f);
    await s.saveSession(row('a', 1));
    await s.saveSession(row('b', 1));
    await s.forgetSession('a');
    await s.forgetSession('nope'); // nothing to forget: nothing written
    expect(await s.sessions()).toEqual([row('b', 1)]);
    await s.close();
    const t = new FileBridgeStore(f);
    expect(await t.sessions()).toEqual([row('b', 1)]);
    for (let i = 0; i < 1_200; i++) await t.saveSession(row('b', i)); // compacted on the way
    expect(fs.readFileSync(f, 'utf8')).not.toContain('"ocSessionID":"a"');
    await t.saveSession(row('a', 2));
    await t.forgetSession('b');
    await t.close();
    expect(await new FileBridgeStore(f).sessions()).toEqual([row('a', 2)]);
  });

  it('compacts a long log to the live state (each write costs its change, not the whole state)', async () => {
    const f = file();
    const s = new FileBridgeStore(f);
    for (let i = 0; i < 1_200; i++) await s.saveSession(row('a', i));
    const lines = fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).length;
    expect(lines).toBeLessThan(1_000);
    expect(await new FileBridgeStore(f).sessions()).toEqual([row('a', 1_199)]);
    expect(fs.existsSync(`${f}.tmp`)).toBe(false);
  });

  it('reads a state file of the earlier whole-JSON format (and the import of a legacy state) and keeps it as a log', async () => {
    const f = file();
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, JSON.stringify({ hostID: 'host_old', sessions: { a: row('a', 7) }, messages: { m1: msg('m1', 'msg_1') } }));
    const s = new FileBridgeStore(f);
    expect(await s.hostID()).toBe('host_old');
    expect(await s.sessions()).toEqual([row('a', 7)]);
    expect(await s.messageByOc('msg_1')).toEqual(msg('m1', 'msg_1'));
    expect(fs.readFileSync(f, 'utf8').startsWith('{"t":')).toBe(true);
    const g = file();
    const imported = new FileBridgeStore(g);
    imported.replace({ hostID: 'host_x', sessions: { b: row('b', 3) }, messages: {} });
    expect(await new FileBridgeStore(g).sessions()).toEqual([row('b', 3)]);
    expect(await new FileBridgeStore(g).hostID()).toBe('host_x');
  });
});

describe('FileBridgeStore: the file is its user\'s alone', () => {
  const mode = (f: string) => fs.statSync(f).mode & 0o777;

  it('is written 0600, also when compacted (through a 0600 temporary file); an earlier looser mode is narrowed when opened', async () => {
    const f = file();
    const s = new FileBridgeStore(f);
    await s.setHostID('host_1');
    expect(mode(f)).toBe(0o600);
    for (let i = 0; i < 1_200; i++) await s.saveSession(row('a', i)); // compacted on the way
    await s.close();
    expect(mode(f)).toBe(0o600);
    fs.chmodSync(f, 0o644);
    const t = new FileBridgeStore(f);
    expect(mode(f)).toBe(0o600);
    expect(await t.hostID()).toBe('host_1');
    await t.close();
  });

  it('a leftover temporary file, even a link planted in its place, is replaced, never written through', async () => {
    const f = file();
    fs.mkdirSync(path.dirname(f), { recursive: true });
    const victim = path.join(path.dirname(f), 'victim');
    fs.writeFileSync(victim, 'untouched');
    fs.symlinkSync(victim, `${f}.tmp`);
    fs.writeFileSync(f, JSON.stringify({ hostID: 'host_old', sessions: {}, messages: {} }), { mode: 0o600 }); // rewritten as a log at once
    const s = new FileBridgeStore(f);
    expect(await s.hostID()).toBe('host_old');
    expect(fs.readFileSync(victim, 'utf8')).toBe('untouched');
    expect(fs.existsSync(`${f}.tmp`)).toBe(false);
    expect(mode(f)).toBe(0o600);
  });

  it('a state file that is a link, or in a folder others can write, is refused and left as it is', () => {
    const f = file();
    fs.mkdirSync(path.dirname(f), { recursive: true });
    const real = `${f}.real`;
    fs.writeFileSync(real, '', { mode: 0o600 });
    fs.symlinkSync(real, f);
    expect(() => new FileBridgeStore(f)).toThrow(`the bridge's state file (--state) ${f} is a symbolic link: give the file itself`);
    const open = path.dirname(file());
    fs.mkdirSync(open, { recursive: true });
    fs.chmodSync(open, 0o777);
    const g = path.join(open, 'state', 'bridge.json');
    expect(() => new FileBridgeStore(g)).toThrow(`the bridge's state file (--state) ${g} is inside ${open}, which other users can write to (mode 0777)`);
    expect(fs.existsSync(g)).toBe(false);
  });

  it.skipIf(process.getuid?.() !== 0)('a state file of another user is refused (as root: one chowned to nobody)', () => {
    const f = file();
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, '{"t":"host","id":"host_forged"}\n', { mode: 0o600 });
    fs.chownSync(f, 65534, 65534);
    expect(() => new FileBridgeStore(f)).toThrow(`the bridge's state file (--state) ${f} belongs to another user (uid 65534; you are uid 0)`);
    expect(fs.readFileSync(f, 'utf8')).toBe('{"t":"host","id":"host_forged"}\n');
  });
});

describe('--import-state-from: the state an earlier version kept in the gateway\'s database (migration 006 tables)', () => {
  it('copies one server\'s state into the bridge\'s own file once, read-only, and never over an existing state', async () => {
    const db = await createTestDatabase();
    const sql = connect(db.url, { max: 1 });
    const pgPassword = process.env.PGPASSWORD;
    try {
      await migrate(sql);
      const server = 'http://127.0.0.1:4096';
      await sql`INSERT INTO bridge_opencode_hosts (server, host_id) VALUES (${server}, 'host_legacy'), ('http://other:1', 'host_other')`;
      await sql`INSERT INTO bridge_opencode_sessions (server, oc_session_id, session_id, last_seq, state)
        VALUES (${server}, 'ses_a', 'gw_a', 41, ${sql.json({ ...emptyState(), title: 'legacy' } as any)}),
               ('http://other:1', 'ses_z', 'gw_z', 3, '{}')`;
      await sql`INSERT INTO bridge_opencode_messages (message_id, session_id, server, oc_session_id, oc_message_id, parts)
        VALUES ('gw_m', 'gw_a', ${server}, 'ses_a', 'msg_1', ${sql.json({ gw_p: 'prt_1' })})`;
      const f = file();
      // The password never on the command line: refused there (nothing read or written), taken from PGPASSWORD.
      const url = new URL(db.url);
      const withPassword = new URL(db.url);
      withPassword.password = 'seen-by-every-user';
      await expect(runBridgeCommand(['opencode', '--url', server, '--state', f, '--import-state-from', withPassword.href])).rejects.toThrow(/leave the password out of the URL .* set PGPASSWORD/);
      expect(fs.existsSync(f)).toBe(false);
      if (url.password) process.env.PGPASSWORD = decodeURIComponent(url.password);
      url.password = '';
      const args = ['opencode', '--url', `${server}/`, '--state', f, '--import-state-from', url.href];
      await runBridgeCommand(args);
      const s = new FileBridgeStore(f);
      expect(await s.hostID()).toBe('host_legacy');
      expect(await s.sessions()).toEqual([{ ocSessionID: 'ses_a', sessionID: 'gw_a', lastSeq: 41, state: { ...emptyState(), title: 'legacy' } }]);
      expect(await s.messageByOc('msg_1')).toEqual({ messageID: 'gw_m', sessionID: 'gw_a', ocSessionID: 'ses_a', ocMessageID: 'msg_1', parts: { gw_p: 'prt_1' } });
      // Read-only: the gateway's rows are untouched; a second import refuses to overwrite the state.
      expect((await sql`SELECT count(*)::int AS n FROM bridge_opencode_sessions`)[0].n).toBe(2);
      await expect(runBridgeCommand(args)).rejects.toThrow(/already holds a bridge state/);
      // A server the database knows nothing of: a clear error, no file.
      const g = file();
      await expect(runBridgeCommand(['opencode', '--url', 'http://nowhere:9', '--state', g, '--import-state-from', url.href])).rejects.toThrow(/no bridge state for OpenCode server http:\/\/nowhere:9/);
      expect(fs.existsSync(g)).toBe(false);
    } finally {
      if (pgPassword === undefined) delete process.env.PGPASSWORD; else process.env.PGPASSWORD = pgPassword;
      await sql.end({ timeout: 2 });
      await db.drop();
    }
  });
});
