import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { CHANNEL, NOTICE_FIELDS, parseNotice, topicOf, type Notice, type NoticeKind } from '../domain/notices.js';
import { SYSTEM } from '../domain/access.js';
import { createSession } from '../domain/sessions.js';
import { createToken, revokeToken } from '../domain/tokens.js';
import { uploadContents, missingContents } from '../domain/snapshots.js';
import { createHash } from 'node:crypto';
import { until } from './support/until.js';

let g: TestGateway;
beforeAll(async () => { g = await startTestGateway(); });
afterAll(async () => { await g?.stop(); });

/** Every `json_build_object('k', '<kind>', …)` a PL/pgSQL function of the migrations sends, with its field names. */
async function triggerNotices(): Promise<{ fn: string; kind: string; fields: string[] }[]> {
  const fns = await g.sql<{ name: string; src: string }[]>`
    SELECT p.proname AS name, p.prosrc AS src FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = current_schema() AND p.prosrc LIKE '%pg_notify%'`;
  const out = [];
  for (const f of fns) {
    for (const m of f.src.matchAll(/pg_notify\(\s*'([^']+)'\s*,\s*json_build_object\(([^;]*?)\)::text\)/g)) {
      expect(m[1], f.name).toBe(CHANNEL);
      const keys = [...m[2].matchAll(/'([a-z]+)'\s*,/g)].map((k) => k[1]);
      expect(keys[0], `${f.name}: the first key is the kind`).toBe('k');
      const kind = /'k'\s*,\s*'([a-z]+)'/.exec(m[2])![1];
      out.push({ fn: f.name, kind, fields: keys.slice(1).filter((k) => k !== kind) });
    }
  }
  return out;
}

describe('the notice catalogue', () => {
  it('every PL/pgSQL producer sends a kind of the catalogue with exactly its fields', async () => {
    const found = await triggerNotices();
    expect(found.map((f) => f.fn).sort()).toEqual(['gateway_token_notice', 'sequence_settlements_locked', 'settlement_positioned_at_commit']);
    for (const f of found) {
      expect(Object.keys(NOTICE_FIELDS), f.fn).toContain(f.kind);
      expect(f.fields, f.fn).toEqual(NOTICE_FIELDS[f.kind as NoticeKind]);
    }
  });

  it('what the producers send is parsed back as the catalogue says and reaches its topic', async () => {
    const heard: Notice[] = [];
    const off = g.app.gateway.bus.on('*', (n) => { heard.push(n); });
    try {
      const s = await createSession(g.sql, SYSTEM, { directory: '/n' });
      const t = await createToken(g.sql, { role: 'reader', label: 'n' });
      await revokeToken(g.sql, t.id);
      await until('the journal and token notices', () => heard.some((n) => n.k === 'j' && n.s === s.id) && heard.some((n) => n.k === 't' && n.id === t.id));
      const j = heard.find((n) => n.k === 'j' && n.s === s.id)!;
      expect(j).toEqual({ k: 'j', s: s.id, q: 1 });
      expect(topicOf(j)).toBe(`journal:${s.id}`);
      expect(topicOf({ k: 't', id: t.id })).toBe('tokens');
    } finally {
      off();
    }
    // Anything that is not a notice of the catalogue is dropped, not dispatched.
    expect(parseNotice('{"k":"x"}')).toBeNull();
    expect(parseNotice('{"k":"j","s":"ses_x"}')).toBeNull();
    expect(parseNotice('not json')).toBeNull();
    expect(parseNotice('{"k":"c","h":"hst_x"}')).toEqual({ k: 'c', h: 'hst_x' });
  });
});

describe('queries never write', () => {
  it('missingContents answers without touching the contents it finds', async () => {
    const data = Buffer.from('held content');
    const hash = createHash('sha256').update(data).digest('hex');
    await uploadContents(g.sql, SYSTEM, { contents: [{ hash, base64: data.toString('base64') }] });
    await g.sql`UPDATE contents SET touched_at = '2001-01-01T00:00:00Z' WHERE hash = ${hash}`;
    expect(await missingContents(g.sql, SYSTEM, [hash, '0'.repeat(64)])).toEqual(['0'.repeat(64)]);
    const [c] = await g.sql`SELECT touched_at FROM contents WHERE hash = ${hash}`;
    expect(c.touchedAt.toISOString()).toBe('2001-01-01T00:00:00.000Z');
  });
});
