import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, subscribe, type TestGateway } from './harness.js';
import { begin, createSession, ok, registerHost, settle, snapshotCounts } from './fixtures.js';
import { once } from 'node:events';
import WebSocket from 'ws';
import { createToken, revokeToken } from '../domain/tokens.js';
import { REFUSAL_CLOSE_REASONS, REFUSAL_MESSAGES, REVOKED_CLOSE_REASON, type Refusal } from '../server/access.js';
import { GatewayClient } from '../client/index.js';
import { ListSessionsDocument, ExecutionSettledDocument } from '../client/generated.js';

/** A graphql-ws connection_init with this payload: how the gateway closes the socket. */
async function wsInit(payload: Record<string, unknown>): Promise<{ code: number; reason: string }> {
  const sock = new WebSocket(g.wsUrl, 'graphql-transport-ws');
  const closed = once(sock, 'close');
  await once(sock, 'open');
  sock.send(JSON.stringify({ type: 'connection_init', payload }));
  const [code, reason] = await closed;
  return { code, reason: String(reason) };
}

let g: TestGateway;
beforeAll(async () => { g = await startTestGateway(); });
afterAll(async () => { await g?.stop(); });

describe('authentication', () => {
  it('answers 401 without a token or with a wrong or revoked one', async () => {
    expect((await g.gql(`{ sessions { edges { node { id } } } }`, undefined, null)).status).toBe(401);
    expect((await g.gql(`{ sessions { edges { node { id } } } }`, undefined, 'gw_wrong')).status).toBe(401);
    const t = await ok(g, `mutation { createToken(input: { role: reader, label: "temp" }) { __typename ... on CreatedToken { id secret role } } }`);
    expect(t.secret).toMatch(/^gw_/);
    expect((await g.gql(`{ sessions { edges { node { id } } } }`, undefined, t.secret)).status).toBe(200);
    expect(await ok(g, `mutation($id: ID!) { revokeToken(tokenID: $id) }`, { id: t.id })).toBe(true);
    expect((await g.gql(`{ sessions { edges { node { id } } } }`, undefined, t.secret)).status).toBe(401);
    // Only the hash is stored.
    const rows = await g.sql`SELECT encode(hash, 'hex') AS h FROM tokens WHERE id = ${t.id}`;
    expect(rows[0].h).not.toContain(t.secret);
    expect(rows[0].h).toHaveLength(64);
  });

  it('says which it was (no token, not a token, unknown or revoked: alike) and the command that makes one, over HTTP, SSE and WebSocket', async () => {
    const t = (await createToken(g.sql, { role: 'reader', label: 'to revoke' }));
    expect(await revokeToken(g.sql, t.id)).toBe(true);
    const unknown = `gw_${'A'.repeat(32)}`;
    const make = 'gateway token create --role reader (or plugin, host, admin)';
    const cases: [string, string | null, Refusal, string][] = [
      ['no header', null, 'MISSING', `A bearer token is required: send "Authorization: Bearer <token>". Make one where the gateway runs: ${make}.`],
      ['an empty header', '', 'MISSING', `A bearer token is required: send "Authorization: Bearer <token>". Make one where the gateway runs: ${make}.`],
      ['no Bearer scheme', t.secret, 'MALFORMED', 'This is not a gateway token: send "Authorization: Bearer gw_…" with the whole token that gateway token create printed (not its tok_… ID).'],
      ['a cut token', `Bearer ${t.secret.slice(0, 20)}`, 'MALFORMED', REFUSAL_MESSAGES.MALFORMED],
      ['a token\'s ID', `Bearer ${t.id}`, 'MALFORMED', REFUSAL_MESSAGES.MALFORMED],
      ['an unknown token', `Bearer ${unknown}`, 'REFUSED', `The gateway refused this token: it is unknown or revoked. Make a new one where the gateway runs (with its data folder or DATABASE_URL): ${make}.`],
      ['a revoked token', `Bearer ${t.secret}`, 'REFUSED', REFUSAL_MESSAGES.REFUSED],
    ];
    for (const [what, header, reason, message] of cases) {
      const headers: Record<string, string> = header === null ? {} : { authorization: header };
      const post = await fetch(g.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query: '{ __typename }' }) });
      // SSE (GraphQL over HTTP's event stream) is answered the same.
      const sse = await fetch(`${g.url}?query=${encodeURIComponent('subscription { executionSettled { cursor } }')}`, { headers: { accept: 'text/event-stream', ...headers } });
      for (const [transport, r] of [['POST', post], ['SSE', sse]] as const) {
        expect({ what, transport, status: r.status }).toEqual({ what, transport, status: 401 });
        expect(r.headers.get('www-authenticate')).toBe(reason === 'MISSING' ? 'Bearer' : 'Bearer error="invalid_token"');
        const text = await r.text();
        expect(JSON.parse(text)).toEqual({ errors: [{ message, extensions: { code: 'UNAUTHENTICATED', reason } }] });
        expect(text).not.toContain(t.id); // the token is never named
      }
      // WebSocket: the connection_init's authorization (graphql-ws), closed with 4403 and the same words, shorter.
      const closed = await wsInit(header === null ? {} : { authorization: header });
      expect({ what, ...closed }).toEqual({ what, code: 4403, reason: REFUSAL_CLOSE_REASONS[reason] });
    }
    expect(REFUSAL_CLOSE_REASONS).toEqual({
      MISSING: 'Forbidden: no token (connectionParams: {"Authorization": "Bearer <token>"})',
      MALFORMED: 'Forbidden: not a gateway token (Bearer gw_…, as gateway token create printed it)',
      REFUSED: 'Forbidden: token unknown or revoked; make one: gateway token create --role <role>',
    });
    // The client's error carries the gateway's words: over HTTP the message, over WebSocket the close reason.
    const client = new GatewayClient({ url: g.url, token: unknown, webSocketImpl: WebSocket, retryForMs: 0 });
    try {
      await expect(client.request(ListSessionsDocument, { first: 1 })).rejects.toThrow(REFUSAL_MESSAGES.REFUSED);
      const wsError = await new Promise<Error>((resolve) => client.subscribe(ExecutionSettledDocument, {}, { next() {}, error: (e) => resolve(e as Error), complete() {} }));
      expect(wsError.message).toBe(`cannot connect to ${g.wsUrl}: closed with 4403 ${REFUSAL_CLOSE_REASONS.REFUSED}`);
    } finally {
      await client.close();
    }
  });

  it('closes a WebSocket whose token is revoked with 4401, saying so', async () => {
    const t = await createToken(g.sql, { role: 'reader', label: 'revoked while open' });
    const sock = new WebSocket(g.wsUrl, 'graphql-transport-ws');
    const closed = once(sock, 'close');
    await once(sock, 'open');
    sock.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${t.secret}` } }));
    await once(sock, 'message');
    expect(await revokeToken(g.sql, t.id)).toBe(true);
    const [code, reason] = await closed;
    expect({ code, reason: String(reason) }).toEqual({ code: 4401, reason: REVOKED_CLOSE_REASON });
  });

  it('refuses a WebSocket connection_init without a valid token', async () => {
    const closed = await new Promise<number>((resolve) => {
      const c = g.ws('gw_not_a_token', { on: { closed: (e: any) => resolve(e.code) } });
      c.subscribe({ query: 'subscription { executionSettled { cursor } }' }, { next() {}, error() {}, complete() {} });
    });
    expect(closed).toBe(4403);
  });

  it('serves /health and /ready without a token', async () => {
    const base = g.url.replace('/graphql', '');
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect(await (await fetch(`${base}/ready`)).json()).toEqual({ status: 'ready' });
  });
});

describe('roles', () => {
  it('gives FORBIDDEN for a root field of another role and executes nothing', async () => {
    const reader = await g.token('reader');
    const plugin = await g.token('plugin');
    const host = await g.token('host');
    const before = await snapshotCounts(g);
    const r1 = await g.gql(`mutation { createSession(input: { directory: "/x" }) { __typename } }`, undefined, reader);
    expect(r1.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    // A forbidden field next to an allowed one: nothing of the operation runs.
    const r2 = await g.gql(`mutation { a: createSession(input: { directory: "/x" }) { __typename } b: registerHost(input: { name: "h" }) { __typename } }`, undefined, plugin);
    expect(r2.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    expect(r2.data ?? null).toBeNull();
    const r3 = await g.gql(`mutation { createSession(input: { directory: "/x" }) { __typename } }`, undefined, host);
    expect(r3.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    const r4 = await g.gql(`{ sessions { edges { node { id } } } }`, undefined, host);
    expect(r4.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    const r5 = await g.gql(`mutation { createToken(input: { role: admin }) { __typename } }`, undefined, plugin);
    expect(r5.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    expect(await snapshotCounts(g)).toEqual(before);
    // Fragments on the root type are checked too.
    const r6 = await g.gql(`mutation { ...F } fragment F on Mutation { createSession(input: { directory: "/x" }) { __typename } }`, undefined, reader);
    expect(r6.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    expect((await g.gql(`mutation { createSession(input: { directory: "/x" }) { __typename } }`, undefined, plugin)).data?.createSession.__typename).toBe('Session');
  });

  it('the checks of an operation run in order (roles, bad input, cost), the first refusal alone answering, over HTTP and WebSocket', async () => {
    const host = await g.token('host');
    // A query the host may not run, with a bad string and over the cost limit: refused for its role only.
    const all = `query($a: String) { sessions(first: 100, after: $a) { edges { node { executions(first: 100) { edges { node { messages(first: 100) { edges { node { id } } } } } } } } } }`;
    const codes = (r: { errors?: { extensions?: Record<string, unknown> }[] }) => (r.errors ?? []).map((e) => e.extensions?.code);
    expect(codes(await g.gql(all, { a: 'x\u0000' }, host))).toEqual(['FORBIDDEN']);
    // Allowed to a reader: the bad string is refused before the cost is counted; without it, the cost.
    expect(codes(await g.gql(all, { a: 'x\u0000' }))).toEqual(['BAD_USER_INPUT']);
    expect(codes(await g.gql(all, {}))).toEqual(['COST_LIMIT']);
    const wide = Array.from({ length: 10 }, (_, i) => `a${i}: session { executions(first: 100) { edges { node { messages(first: 100) { edges { node { id } } } } } } }`).join(' ');
    const sub = `subscription($s: ID) { executionSettled(sessionID: $s) { execution { ${wide} } } }`;
    const forbidden = subscribe(g.ws(host), sub, { s: 'ses_\u0000' });
    const bad = subscribe(g.ws(), sub, { s: 'ses_\u0000' });
    const costly = subscribe(g.ws(), sub, {});
    for (const [s, code] of [[forbidden, 'FORBIDDEN'], [bad, 'BAD_USER_INPUT'], [costly, 'COST_LIMIT']] as const) {
      await expect.poll(() => s.errors.length, { timeout: 5000 }).toBeGreaterThan(0);
      expect(JSON.stringify(s.errors)).toContain(code);
      for (const other of ['FORBIDDEN', 'BAD_USER_INPUT', 'COST_LIMIT'].filter((c) => c !== code)) expect(JSON.stringify(s.errors)).not.toContain(other);
    }
  });

  it('applies roles to subscriptions over WebSocket', async () => {
    const host = await g.token('host');
    const sub = subscribe(g.ws(host), `subscription { executionSettled { cursor } }`);
    await expect.poll(() => sub.errors.length, { timeout: 5000 }).toBeGreaterThan(0);
    expect(JSON.stringify(sub.errors)).toContain('FORBIDDEN');
  });
});

describe('directory scopes', () => {
  it('a scoped token sees, finds and touches only sessions under its directory', async () => {
    const a = await createSession(g, { directory: '/repos/a', title: 'A' });
    const aChild = await createSession(g, { directory: '/repos/a/sub', title: 'A sub' });
    const b = await createSession(g, { directory: '/repos/ab', title: 'AB (not under /repos/a)' });
    const scoped = await g.token('plugin', '/repos/a');
    const list = await ok(g, `{ sessions(first: 100) { edges { node { id directory } } } }`, undefined, scoped);
    const ids = list.edges.map((e: any) => e.node.id);
    expect(ids).toContain(a.id);
    expect(ids).toContain(aChild.id);
    expect(ids).not.toContain(b.id);
    expect(await ok(g, `query($id: ID!) { session(id: $id) { id } }`, { id: b.id }, scoped)).toBeNull();
    expect(await ok(g, `query($id: ID!) { node(id: $id) { id } }`, { id: b.id }, scoped)).toBeNull();
    const upd = await ok(g, `mutation($id: ID!) { updateSession(input: { sessionID: $id, title: "hijack" }) { __typename ... on SessionNotFoundError { sessionID } } }`, { id: b.id }, scoped);
    expect(upd).toEqual({ __typename: 'SessionNotFoundError', sessionID: b.id });
    const rm = await ok(g, `mutation($id: ID!) { removeSession(input: { sessionID: $id }) { __typename } }`, { id: b.id }, scoped);
    expect(rm.__typename).toBe('SessionNotFoundError');
    const child = await ok(g, `mutation($id: ID!) { createSession(input: { parentID: $id }) { __typename } }`, { id: b.id }, scoped);
    expect(child.__typename).toBe('SessionNotFoundError');
    const outside = await ok(g, `mutation { createSession(input: { directory: "/repos/b" }) { __typename ... on InvalidRequestError { field } } }`, undefined, scoped);
    expect(outside).toEqual({ __typename: 'InvalidRequestError', field: 'directory' });
    expect((await ok(g, `query($id: ID!) { session(id: $id) { title } }`, { id: b.id })).title).toBe('AB (not under /repos/a)');
  });

  it('scopes executions, continuity and settlements too', async () => {
    const host = await registerHost(g);
    const b = await createSession(g, { directory: '/scope2/b' });
    const e = await begin(g, host, b.id);
    await settle(g, host, e.id);
    const scoped = await g.token('reader', '/scope2/a');
    expect(await ok(g, `query($id: ID!) { execution(id: $id) { id } }`, { id: e.id }, scoped)).toBeNull();
    const c = await ok(g, `query($id: ID!) { continuity(executionID: $id) { __typename ... on ContinuityUnknown { reason } } }`, { id: e.id }, scoped);
    expect(c).toEqual({ __typename: 'ContinuityUnknown', reason: 'UNKNOWN_EXECUTION' });
    const st = await ok(g, `{ settlements(first: 100) { edges { node { executionID } } } }`, undefined, scoped);
    expect(st.edges.map((x: any) => x.node.executionID)).not.toContain(e.id);
    const hostScoped = await g.token('host', '/scope2/a');
    const h2 = await registerHost(g, { token: hostScoped });
    expect(await begin(g, h2, b.id)).toMatchObject({ __typename: 'SessionNotFoundError' });
  });
});

describe('limits', () => {
  it('enforces depth, alias, cost and page-size limits on HTTP', async () => {
    const deep = await g.gql(`{ sessions { edges { node { parent { parent { parent { parent { parent { parent { parent { parent { parent { parent { id } } } } } } } } } } } } } }`);
    expect(deep.errors?.[0].message).toMatch(/depth/i);
    const aliases = Array.from({ length: 40 }, (_, i) => `a${i}: sessions { pageInfo { hasNextPage } }`).join(' ');
    const al = await g.gql(`{ ${aliases} }`);
    expect(al.errors?.[0].message).toMatch(/alias/i);
    const costly = await g.gql(`{ sessions(first: 100) { edges { node { executions(first: 100) { edges { node { messages(first: 100) { edges { node { id } } } } } } } } } }`);
    expect(costly.errors?.[0].extensions?.code).toBe('COST_LIMIT');
    const page = await g.gql(`{ sessions(first: 1000) { edges { node { id } } } }`);
    expect(page.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('enforces the same limits over WebSocket', async () => {
    const c = g.ws();
    const costly = subscribe(c, `subscription { executionSettled { execution { session { executions(first: 100) { edges { node { messages(first: 100) { edges { node { jobs: execution { jobs(first: 100) { edges { node { id } } } } } } } } } } } } } }`);
    await expect.poll(() => costly.errors.length, { timeout: 5000 }).toBeGreaterThan(0);
    const deep = subscribe(c, `subscription { executionSettled { execution { session { parent { parent { parent { parent { parent { parent { parent { parent { parent { id } } } } } } } } } } } } }`);
    await expect.poll(() => deep.errors.length, { timeout: 5000 }).toBeGreaterThan(0);
    expect(JSON.stringify(deep.errors)).toMatch(/depth/i);
  });

  it('masks unexpected errors: no stack, SQL or path reaches the client', async () => {
    // Break the database under the gateway for one request: drop a column the query needs.
    await g.sql`ALTER TABLE tokens RENAME COLUMN label TO label_old`;
    try {
      const r = await g.gql(`mutation { createToken(input: { role: reader }) { __typename } }`);
      expect(r.errors).toHaveLength(1);
      expect(r.errors![0].message).toBe('Unexpected error.');
      const text = JSON.stringify(r.errors![0].extensions ?? {}) + r.errors![0].message;
      expect(text).not.toMatch(/label|relation|postgres|stack|\/work\/|\.ts/i);
    } finally {
      await g.sql`ALTER TABLE tokens RENAME COLUMN label_old TO label`;
    }
  });
});
