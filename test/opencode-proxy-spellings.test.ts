// The admission proxy reads every request once, canonically, and refuses what OpenCode could read
// differently. Pure checks of that reading, then a differential test against a real OpenCode (opencode-ai
// 1.18.33) behind the proxy: generated spellings of every work route (percent-encoding, double encoding,
// %2F, dot segments, repeated and trailing slashes, route-word case, `;` parameters, queries, JSON escapes,
// duplicate keys, content types and encodings) are sent raw for a sealed session and for an open one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import WebSocket from 'ws';
import type { TestGateway } from './harness.js';
import type { OpencodeClient } from '../bridge/opencode/client.js';
import { findOpencodeBinary } from '../bridge/opencode/launch.js';
import type { OpencodeFront } from '../bridge/opencode/serve.js';
import { startFrontedOpencode, type FrontedOpencode } from './support/opencode-front.js';
import { canonicalPath, readJsonBody, readTarget, sessionsNamed, type Target } from '../bridge/opencode/request-reading.js';
import { promptAsync, until } from './support/opencode-kit.js';

const ID = 'ses_dbe5910baffe30fBLy3cj7SWan';

describe('the proxy\'s reading of a request (pure)', () => {
  const problem = (p: string) => { const c = canonicalPath(p); return 'problem' in c ? c.problem : null; };

  it('accepts canonical paths and decodes what may be encoded', () => {
    expect(canonicalPath(`/session/${ID}/prompt_async`)).toEqual({ segments: ['session', ID, 'prompt_async'] });
    expect(canonicalPath('/mcp/my%20server/connect')).toEqual({ segments: ['mcp', 'my server', 'connect'] });
    expect(canonicalPath('/mcp/caf%C3%A9/connect')).toEqual({ segments: ['mcp', 'café', 'connect'] });
    expect(canonicalPath('/')).toEqual({ segments: [] });
  });

  it('refuses every spelling whose reading could differ, naming why', () => {
    const cases: [string, RegExp][] = [
      [`/session/%73es_${ID.slice(4)}/prompt`, /percent-encodes "s"/],
      [`/session/%2573es_${ID.slice(4)}/prompt`, /percent-encodes "%"/],
      [`/session%2F${ID}/prompt`, /percent-encodes "\/"/],
      [`/session%2f${ID}/prompt`, /percent-encodes "\/"/],
      [`/session/${ID}%5Cprompt`, /percent-encodes "\\\\"/],
      [`/session/${ID}/%2E%2E/x`, /percent-encodes "\."/],
      [`/session/${ID}%3Bx/prompt`, /percent-encodes ";"/],
      [`/session/${ID}%00/prompt`, /percent-encodes/],
      [`/session/./${ID}/prompt`, /dot segment/],
      [`/session/x/../${ID}/prompt`, /dot segment/],
      [`/session//${ID}/prompt`, /empty segment/],
      [`//session/${ID}/prompt`, /empty segment/],
      [`/session/${ID}/prompt/`, /ends with a slash/],
      [`/session/${ID};a=b/prompt`, /";" parameter/],
      [`/session/${ID}/prompt;x`, /";" parameter/],
      [`/session/${ID}/prompt#x`, /fragment/],
      [`/session/${ID}\\prompt`, /character "\\\\"/],
      [`/session/${ID}/pr@mpt`, /character "@"/],
      [`/session/${ID}/%zz`, /malformed/],
      [`/session/${ID}/%C3`, /not UTF-8/],
      [`http://127.0.0.1/session/${ID}/prompt`, /origin form/],
    ];
    for (const [p, why] of cases) expect(problem(p), p).toMatch(why);
    const t = readTarget('POST', `/session/%73es_${ID.slice(4)}/prompt_async`);
    expect(t).toMatchObject({ refused: true, status: 400, name: 'NonCanonicalRequestError' });
    // Reads pass as they are; a WebSocket upgrade is read like work.
    expect(readTarget('GET', `/session/%73es_${ID.slice(4)}`)).toMatchObject({ refused: false, policy: 'read' });
    expect(readTarget('GET', `/pty/%70ty_x/connect`, true)).toMatchObject({ refused: true, status: 400 });
  });

  it('only the exact spelling of abort, interrupt and delete stops without admission', () => {
    const policy = (m: string, p: string) => { const t = readTarget(m, p); return t.refused ? t.status : t.policy; };
    expect(policy('POST', `/session/${ID}/abort`)).toBe('stop');
    expect(policy('POST', `/SESSION/${ID}/abort`)).toBe('admit');
    expect(policy('POST', `/session/${ID}/Abort`)).toBe('admit');
    expect(policy('POST', `/session/${ID}/abort/`)).toBe(400);
    expect(policy('POST', `/session/${ID}/abort;/../prompt_async`)).toBe(400);
    expect(policy('DELETE', `/session/${ID}`)).toBe('stop');
    expect(policy('DELETE', `/session/${ID}/message/msg_x`)).toBe('admit');
    expect(policy('PATCH', `/session/${ID}`)).toBe('admit');
  });

  it('finds every session a request names: path, decoded query, OpenCode\'s headers, parsed JSON body', () => {
    const t = readTarget('POST', `/session/${ID}/x?a=%2573es_aaaaaaaa&b=ses_bbbbbbbb`) as Target;
    const body = readJsonBody({ 'content-type': 'application/json' },
      Buffer.from('{"events":[{"aggregateID":"\\u0073es_cccccccc"},{"data":{"info":{"id":"ses_dddddddd"}}}],"ses_eeeeeeee":1,"k":"ses_ffffffff","k":"ses_gggggggg"}'));
    if (body.refused) throw new Error(body.message);
    const named = sessionsNamed(t, { 'x-opencode-workspace': 'ses_hhhhhhhh', 'x-other': 'ses_iiiiiiii' }, body.value);
    expect(named.path).toEqual([ID]);
    expect(new Set(named.other)).toEqual(new Set(['ses_aaaaaaaa', 'ses_bbbbbbbb', 'ses_cccccccc', 'ses_dddddddd', 'ses_eeeeeeee', 'ses_gggggggg', 'ses_hhhhhhhh']));
    // What is forwarded is what was read: escapes and duplicate keys are gone.
    expect(body.bytes.toString()).not.toContain('\\u0073');
    expect(body.bytes.toString()).not.toContain('ses_ffffffff');
  });

  it('refuses bodies it cannot read: compressed, not JSON, not UTF-8, a non-JSON content type', () => {
    const json = { 'content-type': 'application/json' };
    expect(readJsonBody({ ...json, 'content-encoding': 'gzip' }, zlib.gzipSync('{}'))).toMatchObject({ refused: true, status: 415 });
    expect(readJsonBody({ 'content-type': 'text/plain' }, Buffer.from('{}'))).toMatchObject({ refused: true, status: 415 });
    expect(readJsonBody({}, Buffer.from('{}'))).toMatchObject({ refused: true, status: 415 });
    expect(readJsonBody({ 'content-type': 'application/json; charset=latin1' }, Buffer.from('{}'))).toMatchObject({ refused: true, status: 415 });
    expect(readJsonBody(json, Buffer.from('{"a":'))).toMatchObject({ refused: true, status: 400, name: 'BadRequestError' });
    expect(readJsonBody(json, Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]))).toMatchObject({ refused: true, status: 400 });
    // Readable: a JSON type with a charset or a +json suffix, a byte order mark, an empty body with no type.
    expect(readJsonBody({ 'content-type': 'application/json; charset=UTF-8' }, Buffer.from('{"a":1}'))).toMatchObject({ refused: false, value: { a: 1 } });
    expect(readJsonBody({ 'content-type': 'application/merge-patch+json' }, Buffer.from('\uFEFF{"a":1}'))).toMatchObject({ refused: false, value: { a: 1 } });
    expect(readJsonBody({}, Buffer.alloc(0))).toMatchObject({ refused: false, value: undefined });
    // A nested body is walked for IDs; one nested absurdly deep is refused, not a stack overflow.
    const nested = readJsonBody(json, Buffer.from('['.repeat(200) + '"ses_jjjjjjjj"' + ']'.repeat(200)));
    if (nested.refused) throw new Error(nested.message);
    expect(sessionsNamed(readTarget('POST', '/sync/replay') as Target, {}, nested.value).other).toEqual(['ses_jjjjjjjj']);
    expect(readJsonBody(json, Buffer.from('['.repeat(5000) + ']'.repeat(5000)))).toMatchObject({ refused: true, status: 400, message: expect.stringContaining('nested') });
  });

  it('any canonical path reads as decodeURIComponent reads it; any other path is refused, never read otherwise', () => {
    fc.assert(fc.property(fc.array(fc.oneof(
      fc.constantFrom('session', 'api', ID, 'prompt_async', '.', '..', '', ';x', '%73', '%2573', '%2F', '%20', '%C3%A9', '%c3%a9', '\\', '%5C', 'A', '~'),
      fc.string({ maxLength: 4 })), { maxLength: 6 }), (parts) => {
      const p = '/' + parts.join('/');
      const c = canonicalPath(p);
      if ('segments' in c) {
        expect(c.segments).toEqual(p === '/' ? [] : p.slice(1).split('/').map(decodeURIComponent));
        // Decoding leaves no path structure and nothing left to decode.
        for (const s of c.segments) expect(s).not.toMatch(/[/\\%;?#]/);
      } else expect(c.problem).toBeTruthy();
    }), { numRuns: 2000 });
  });
});

const bin = findOpencodeBinary();
const PASSWORD = 'proxy-secret-2';
const AUTH = `Basic ${Buffer.from(`opencode:${PASSWORD}`).toString('base64')}`;

interface Sent { status: number; body: string; type: string }
/** A request exactly as given (Node's client sends the target byte for byte), with the proxy password. */
function send(url: string, method: string, target: string, headers: Record<string, string>, body?: Buffer): Promise<Sent> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const r = http.request({ host: u.hostname, port: u.port, method, path: target, agent: false,
      headers: { authorization: AUTH, ...(body ? { 'content-length': String(body.length) } : {}), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), type: String(res.headers['content-type'] ?? '') }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(body);
  });
}

/** Spellings of a path: each arbitrary picks a way to write the same route differently. */
function spellings(route: string[]) {
  const hex = (c: string, upper: boolean) => { const h = c.charCodeAt(0).toString(16).padStart(2, '0'); return '%' + (upper ? h.toUpperCase() : h); };
  const segment = (s: string) => fc.oneof(
    { weight: 8, arbitrary: fc.constant(s) },
    fc.tuple(fc.nat(s.length - 1), fc.boolean()).map(([i, up]) => s.slice(0, i) + hex(s[i], up) + s.slice(i + 1)), // %73es_
    fc.tuple(fc.nat(s.length - 1), fc.boolean()).map(([i, up]) => s.slice(0, i) + '%25' + hex(s[i], up).slice(1) + s.slice(i + 1)), // %2573es_
    fc.constant(s.toUpperCase()),
    fc.constant(s[0].toUpperCase() + s.slice(1)),
    fc.constantFrom(`${s};a=b`, `${s}%20`, `${s}%00`, `${s}%09`, `${s}.`, `${s}%2E`, `${s}%3B`),
  );
  const joiner = fc.oneof({ weight: 24, arbitrary: fc.constant('/') }, fc.constantFrom('//', '/./', '/x/../', '%2F', '%2f', '\\', '%5C', '/%2E/'));
  return fc.tuple(
    fc.tuple(...route.map(segment)),
    fc.array(joiner, { minLength: route.length, maxLength: route.length }),
    fc.oneof({ weight: 8, arbitrary: fc.constant('') }, fc.constantFrom('/', '//', ';', ';x=1', '/.', '?', '?x=1', '?directory=%2Ftmp', '#f')),
  ).map(([segs, joins, tail]) => segs.map((s, i) => (i === 0 ? '/' : joins[i]) + s).join('') + tail);
}

/** JSON text of a value with the characters of the IDs in it \u-escaped at random. */
const escapedJson = (value: unknown, mask: number) => JSON.stringify(value).replace(/ses_/g, (m) =>
  [...m].map((c, i) => ((mask >> i) & 1 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join(''));

describe.skipIf(!bin)('spellings of work routes through the admission proxy (real opencode-ai server)', { timeout: 900_000 }, () => {
  let fx: FrontedOpencode;
  let gw: TestGateway;
  let front: OpencodeFront;
  let client: OpencodeClient;
  let tmp: string;
  let project: string;
  const forwarded: { method: string; target: string; sessions: string[] }[] = [];

  beforeAll(async () => {
    fx = await startFrontedOpencode({ bin: bin!, password: PASSWORD, front: { onForward: (f) => forwarded.push(f) } });
    ({ gw, front, client, tmp, project } = fx);
  }, 600_000);

  afterAll(async () => { await fx?.stop(); });

  const mirrored = (oc: string) => until(`session ${oc} mirrored`, async () => front.bridge.gatewaySessionOf(oc), 60_000);
  const worktree = () => fs.readdirSync(project).sort().join(',');
  const lastSeq = async (oc: string) => Math.max(-1, ...(await client.history({})).filter((e) => e.sessionID === oc).map((e) => e.seq));

  /** Work routes of OpenCode 1.18.33 (its OpenAPI document), each with a body that would do something. */
  function workRoutes(oc: string, ids: { message: string; part: string; seq: number }) {
    const slip = path.join(project, 'slipped.txt');
    const prompt = { parts: [{ type: 'text', text: 'slip in' }] };
    return [
      { method: 'POST', route: ['session', oc, 'prompt_async'], body: prompt },
      { method: 'POST', route: ['session', oc, 'message'], body: { ...prompt, noReply: true } },
      { method: 'POST', route: ['session', oc, 'shell'], body: { agent: 'build', command: `touch ${slip}` } },
      { method: 'POST', route: ['session', oc, 'command'], body: { command: 'init', arguments: '' } },
      { method: 'POST', route: ['session', oc, 'summarize'], body: { providerID: 'fake', modelID: 'fake-model' } },
      { method: 'POST', route: ['session', oc, 'revert'], body: { messageID: ids.message } },
      { method: 'POST', route: ['session', oc, 'unrevert'], body: undefined },
      { method: 'POST', route: ['session', oc, 'init'], body: { providerID: 'fake', modelID: 'fake-model', messageID: 'msg_x' } },
      { method: 'PATCH', route: ['session', oc], body: { title: 'slipped' } },
      { method: 'PATCH', route: ['session', oc, 'message', ids.message, 'part', ids.part], body: { id: ids.part, sessionID: oc, messageID: ids.message, type: 'text', text: 'slipped' } },
      { method: 'DELETE', route: ['session', oc, 'message', ids.message], body: undefined },
      { method: 'POST', route: ['api', 'session', oc, 'prompt'], body: { prompt: { text: 'slip in' } } },
      { method: 'POST', route: ['api', 'session', oc, 'compact'], body: undefined },
      { method: 'POST', route: ['experimental', 'session', oc, 'background'], body: undefined },
      { method: 'POST', route: ['sync', 'replay'], body: { directory: project, events: [{ id: 'evt_slipped0000000000000000', aggregateID: oc, seq: ids.seq + 1, type: 'session.updated.1', data: { sessionID: oc, info: { title: 'replayed' } } }] } },
      { method: 'POST', route: ['sync', 'steal'], body: { sessionID: oc } },
      { method: 'POST', route: ['experimental', 'control-plane', 'move-session'], body: { sessionID: oc, destination: { type: 'directory', directory: tmp } } },
    ];
  }

  const variant = (routes: ReturnType<typeof workRoutes>, oc: string) => fc.integer({ min: 0, max: routes.length - 1 }).chain((i) => fc.record({
    route: fc.constant(routes[i]),
    target: spellings(routes[i].route),
    query: fc.constantFrom('', '', `?sessionID=${oc}`, `?s=%2573es_${oc.slice(4)}`, `?directory=${encodeURIComponent(project)}`),
    mask: fc.nat(15),
    duplicate: fc.boolean(),
    type: fc.constantFrom('application/json', 'application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/vnd.api+json'),
    bom: fc.boolean(),
    gzip: fc.nat(9).map((n) => n === 0),
    header: fc.constantFrom<Record<string, string>>({}, {}, { 'x-opencode-workspace': oc }, { 'x-opencode-directory': encodeURIComponent(project) }),
  }));

  const sendVariant = async (v: any, other: string) => {
    const target = v.target.includes('?') || v.target.includes('#') ? v.target : v.target + v.query;
    let body: Buffer | undefined;
    const headers: Record<string, string> = { ...v.header };
    if (v.route.body !== undefined) {
      let text = escapedJson(v.route.body, v.mask);
      // A duplicate key: the first spelling names another session, the last the one meant.
      if (v.duplicate) text = text.replace(/^\{/, `{"sessionID":"${other}",`);
      body = Buffer.from((v.bom ? '\uFEFF' : '') + text);
      if (v.gzip) { body = zlib.gzipSync(body); headers['content-encoding'] = 'gzip'; }
      headers['content-type'] = v.type;
    }
    return send(front.url, v.route.method, target, headers, body);
  };

  it('a sealed session: no spelling of any work route is admitted or reaches OpenCode as work; reads and abort still work', async () => {
    // The sealed session has history (a prompt answered), so every route has something to act on.
    const sealed = (await client.createSession({ title: 'sealed' })).id;
    const open = (await client.createSession({ title: 'bystander' })).id;
    await (await promptAsync(client, sealed, [{ text: 'hello' }]))();
    const gid = await mirrored(sealed);
    await mirrored(open);
    const seal = await gw.gql(`mutation($i: SealSessionInput!) { sealSession(input: $i) { __typename ... on SessionSealed { sealedAt } } }`, { i: { sessionID: gid, timeoutMs: 60_000 } });
    expect(seal.data.sealSession.__typename).toBe('SessionSealed');
    const msgs = await client.messages(sealed);
    const user = msgs.find((m) => m.info.role === 'user')!;
    const ids = { message: user.info.id, part: (user.parts as any[])[0].id, seq: await lastSeq(sealed) };
    const files = worktree();
    const admissions = Number((await gw.sql`SELECT count(*)::int AS n FROM admissions WHERE session_id = ${gid}`)[0].n);
    const routes = workRoutes(sealed, ids);
    const answers = new Map<string, number>();
    let slipped = 0;
    // The spellings that reached OpenCode before: now each is refused by the proxy, nothing forwarded.
    const rest = sealed.slice(1);
    const json = { 'content-type': 'application/json' };
    const before = forwarded.length;
    for (const [method, target, body, status, name] of [
      ['POST', `/api/session/%73${rest}/prompt`, { prompt: { text: 'x' } }, 400, 'NonCanonicalRequestError'],
      ['POST', `/session/%73${rest}/prompt_async`, { parts: [{ type: 'text', text: 'x' }] }, 400, 'NonCanonicalRequestError'],
      ['POST', `/session/%73${rest}/message`, { parts: [{ type: 'text', text: 'x' }] }, 400, 'NonCanonicalRequestError'],
      ['POST', `/session/%73${rest}/shell`, { agent: 'build', command: 'true' }, 400, 'NonCanonicalRequestError'],
      ['POST', '/sync/replay', null, 409, 'SessionSealedError'],
    ] as const) {
      const text = body ? JSON.stringify(body) : `{"directory":${JSON.stringify(project)},"events":[{"id":"evt_x","aggregateID":"\\u0073${rest}","seq":${ids.seq + 1},"type":"session.updated.1","data":{}}]}`;
      const r = await send(front.url, method, target, json, Buffer.from(text));
      expect(r.status, target).toBe(status);
      expect(JSON.parse(r.body).name, target).toBe(name);
    }
    expect(forwarded.length).toBe(before);

    await fc.assert(fc.asyncProperty(variant(routes, sealed), async (v) => {
      const before = forwarded.length;
      const r = await sendVariant(v, open);
      const out = forwarded.slice(before);
      const key = `${r.status} ${(() => { try { return JSON.parse(r.body).name; } catch { return '?'; } })()}`;
      answers.set(key, (answers.get(key) ?? 0) + 1);
      if (out.length) {
        slipped++;
        // Forwarded only when it names no session the proxy knows; then OpenCode itself finds nothing to act
        // on: an error, or its web app's page (what it serves for any path that is not a route).
        expect(out[0].sessions, `${v.route.method} ${out[0].target}`).not.toContain(sealed);
        if (r.status < 400) expect(r.type, `${v.route.method} ${out[0].target}: ${r.status} ${r.body.slice(0, 200)}`).toMatch(/^text\/html/);
      } else {
        expect([400, 404, 409, 415], `${v.route.method} ${v.target}: ${r.body}`).toContain(r.status);
      }
    }), { numRuns: Number(process.env.SPELLINGS_N ?? 300) });

    // Nothing of it reached OpenCode as work: no event of the session after the seal (messages, parts,
    // session updates, reverts, replays), no file, no admission on the gateway's record.
    expect(await lastSeq(sealed)).toBe(ids.seq);
    expect((await client.messages(sealed)).length).toBe(msgs.length);
    expect(worktree()).toBe(files);
    expect(Number((await gw.sql`SELECT count(*)::int AS n FROM admissions WHERE session_id = ${gid}`)[0].n)).toBe(admissions);
    console.log(`sealed: ${[...answers].map(([k, n]) => `${k} ×${n}`).join(', ')}; ${slipped} forwarded as naming no known session`);
    // Reads and abort still work, also spelled unusually for a read.
    expect((await send(front.url, 'GET', `/session/${sealed}/message`, {})).status).toBe(200);
    expect((await send(front.url, 'GET', `/session/%73es_${sealed.slice(4)}`, {})).status).toBeLessThan(600);
    expect((await send(front.url, 'POST', `/session/${sealed}/abort`, {})).status).toBe(200);
    expect((await send(front.url, 'POST', `/api/session/${sealed}/interrupt`, {})).status).toBeLessThan(500);
    // A WebSocket upgrade naming the sealed session is refused before it reaches OpenCode.
    const code = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${front.url.replace('http', 'ws')}/pty/pty_x/connect?session=${sealed}`, { headers: { authorization: AUTH } });
      ws.on('unexpected-response', (_q, res) => { resolve(res.statusCode ?? 0); res.resume(); });
      ws.on('error', () => resolve(-1));
    });
    expect(code).toBe(409);
  });

  it('an open session: every spelling is either admitted as the route it means or refused, never forwarded unadmitted', async () => {
    const open = (await client.createSession({ title: 'open' })).id;
    const other = (await client.createSession({ title: 'other' })).id;
    await client.promptAsync(open, 'hello').catch(() => {});
    await until('open session idle with a message', async () => !(await client.status())[open] && (await client.messages(open)).length >= 2, 120_000);
    const gid = await mirrored(open);
    await mirrored(other);
    const msgs = await client.messages(open);
    const user = msgs.find((m) => m.info.role === 'user')!;
    // Routes that change the session without starting a turn (a turn per run would take minutes).
    const routes = workRoutes(open, { message: user.info.id, part: (user.parts as any[])[0].id, seq: await lastSeq(open) })
      .filter((r) => (r.method === 'PATCH' && r.route.length === 2) || (r.route.at(-1) === 'message' && r.method === 'POST'));
    const answers = new Map<string, number>();
    await fc.assert(fc.asyncProperty(variant(routes, open), async (v) => {
      const before = forwarded.length;
      const r = await sendVariant(v, other);
      const out = forwarded.slice(before);
      const key = `${r.status} ${out.length ? 'forwarded' : 'refused'}`;
      answers.set(key, (answers.get(key) ?? 0) + 1);
      if (out.length && r.status < 400 && !r.type.startsWith('text/html')) {
        // OpenCode acted (not its web app's page for a path that is no route): the proxy had admitted it
        // for the session it acted on.
        expect(out[0].sessions, `${v.route.method} ${out[0].target}`).toContain(open);
      }
      if (!out.length) expect([400, 404, 409, 415], `${v.route.method} ${v.target}: ${r.body}`).toContain(r.status);
    }), { numRuns: Number(process.env.SPELLINGS_OPEN_N ?? 120) });
    // The canonical spellings are admitted as the routes they are, and the gateway records each admission.
    expect((await send(front.url, 'PATCH', `/session/${open}`, { 'content-type': 'application/json' }, Buffer.from('{"title":"renamed"}'))).status).toBe(200);
    expect(forwarded.at(-1)).toMatchObject({ method: 'PATCH', target: `/session/${open}`, sessions: [open] });
    expect((await client.getSession(open)).title).toBe('renamed');
    const routesAdmitted = (await gw.sql`SELECT DISTINCT route FROM admissions WHERE session_id = ${gid}`).map((a: any) => a.route);
    expect(routesAdmitted).toEqual(expect.arrayContaining(['PATCH /session/{id}']));
    console.log(`open: ${[...answers].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  });
});
