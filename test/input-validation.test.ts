import { afterAll, beforeAll, describe, expect, it, test } from 'vitest';
import fc from 'fast-check';
import { schema } from '../schema/index.js';
import { startTestGateway, subscribe, type TestGateway } from './harness.js';
import { appendText, createSession, ok, registerHost } from './fixtures.js';
import { fieldPath, generateCall, inject, renderCall, rootFields, type Leaf, type RootCall } from './support/schema-args.js';
import { isBadString } from '../server/input-validation.js';

/**
 * NUL and lone surrogates in any string argument of any root field, generated from
 * the schema, never reach SQL: a typed InvalidRequestError { field } where the mutation's result has
 * it, a BAD_USER_INPUT error otherwise; never INTERNAL_SERVER_ERROR, and nothing written.
 */

let g: TestGateway;
let ids: Record<string, string>;
let host: { hostID: string; token: string };
let calls: RootCall[];

/** Every table's row count and content hash: equal before and after means nothing was written. */
async function digest(): Promise<Record<string, string>> {
  const tables = await g.sql<{ name: string }[]>`
    SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations' ORDER BY 1`;
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    const [r] = await g.sql.unsafe(`SELECT count(*)::int AS n, md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) AS h FROM "${name}" x`);
    out[name] = `${r.n}:${r.h}`;
  }
  return out;
}

/** Plausible strings: real IDs by argument name, absolute directories, so a call without the bad byte would do real work. */
function stringFor(name: string): string {
  const n = name.toLowerCase();
  if (n === 'directory') return '/fuzz/dir';
  if (n.endsWith('id') && n !== 'id' && n !== 'providerid' && n !== 'modelid') {
    const kind = n.slice(0, -2);
    return ids[kind] ?? ids[{ parent: 'session' }[kind] ?? ''] ?? ids.session;
  }
  if (n === 'id') return ids.session;
  if (n === 'after') return '';
  if (n === 'hashes' || n === 'hash') return 'a'.repeat(64);
  return 'fine text';
}

const BAD = fc.constantFrom('\u0000', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uDC00\uD800');
const badString = fc.tuple(fc.string({ maxLength: 8 }), BAD, fc.string({ maxLength: 8 })).map(([a, b, c]) => a + b + c);

interface Answer { errors: any[]; data: any; status: number }

async function send(call: RootCall, args: Record<string, unknown>, mode: 'variables' | 'literal'): Promise<Answer> {
  const { query, variables } = renderCall(call, args, mode);
  if (call.operation !== 'subscription') {
    const r = await g.gql(query, variables);
    return { errors: r.errors ?? [], data: r.data ?? null, status: r.status };
  }
  const client = g.ws();
  const sub = subscribe(client, query, variables);
  try {
    await sub.waitFor(() => sub.errors.length > 0 || sub.events.length > 0 || sub.done, 10_000).catch(() => {});
    return { errors: sub.errors.flat() as any[], data: sub.events[0] ?? null, status: 200 };
  } finally {
    sub.unsubscribe();
    await client.dispose();
  }
}

function codes(a: Answer): string[] {
  return a.errors.map((e: any) => e?.extensions?.code ?? e?.message ?? String(e));
}

async function check(call: RootCall, leaf: Leaf, bad: string, mode: 'variables' | 'literal') {
  const a = await send(call, inject(call.args, leaf, bad), mode);
  const where = `${call.operation} ${call.field.name} ${fieldPath(leaf)} ${mode} ${JSON.stringify(bad)}`;
  expect(codes(a), where).not.toContain('INTERNAL_SERVER_ERROR');
  expect(JSON.stringify(a.errors), where).not.toMatch(/Unexpected error|invalid byte sequence|postgres/i);
  if (mode === 'literal' && /[\uD800-\uDFFF]/.test(bad)) {
    // GraphQL's own lexer refuses an unpaired surrogate escape in a literal: nothing is parsed, nothing runs.
    // (Over HTTP the error has code GRAPHQL_PARSE_FAILED; graphql-ws passes the parser's error without a code.)
    expect(a.errors, where).toHaveLength(1);
    expect(a.errors[0].message, where).toMatch(/^Syntax Error: Invalid Unicode escape sequence/);
  } else if (leaf.rejectedByScalar) {
    // The scalar's parser refuses the malformed value (as any malformed DateTime), or the bad-bytes check does
    // when it runs first (a query's variables are checked before they are coerced): a client error, nothing runs.
    expect(a.errors.length, where).toBeGreaterThan(0);
    for (const e of a.errors) expect(e.message, where).toMatch(new RegExp(`${leaf.rejectedByScalar}|must not contain NUL characters or unpaired UTF-16 surrogates`));
    expect(a.data?.[call.field.name] ?? null, where).toBeNull();
  } else if (call.typedInvalid) {
    expect(a.errors, where).toEqual([]);
    expect(a.data[call.field.name], where).toEqual({ __typename: 'InvalidRequestError', field: fieldPath(leaf) });
  } else {
    expect(codes(a), where).toEqual(['BAD_USER_INPUT']);
    expect(a.data?.[call.field.name] ?? null, where).toBeNull();
  }
}

beforeAll(async () => {
  g = await startTestGateway();
  host = await registerHost(g, { leaseMs: 600_000 });
  const s = await createSession(g, { directory: '/fuzz', title: 'fuzz' });
  const m = await appendText(g, host, s.id, 'hello');
  const t = await ok(g, `mutation { createToken(input: { role: reader }) { ... on CreatedToken { id } } }`);
  ids = { session: s.id, host: host.hostID, message: m.id, part: m.parts[0].id, token: t.id, execution: 'exe_0', job: 'job_0', command: 'cmd_0', snapshot: 'snp_0', base: 'snp_0' };
  calls = rootFields(schema).map(({ operation, field }) => generateCall(operation, field, stringFor));
});
afterAll(async () => { await g?.stop(); });

describe('bad bytes in arguments', () => {
  it('the generated calls cover every root field, and every string argument of them', () => {
    const all = rootFields(schema);
    expect(calls.map((c) => c.field.name)).toEqual(all.map((f) => f.field.name));
    expect(all.length).toBeGreaterThan(35);
    // Every root field with a string somewhere in its arguments has leaves (spot checks of nested ones).
    const leaves = (name: string) => calls.find((c) => c.field.name === name)!.leaves.map(fieldPath);
    expect(leaves('appendMessage')).toEqual(expect.arrayContaining(['parts[0].text', 'sessionID', 'idempotencyKey']));
    expect(leaves('createSession')).toEqual(expect.arrayContaining(['metadata', 'title', 'directory']));
    // Inside a JSON value: a string and a key, both named by the JSON argument's own position.
    expect(calls.find((c) => c.field.name === 'createSession')!.leaves.filter((l) => fieldPath(l) === 'metadata')).toHaveLength(2);
    expect(leaves('missingContents')).toEqual(['hashes[0]']);
    expect(leaves('sessionEvents')).toEqual(expect.arrayContaining(['sessionID', 'after']));
    expect(calls.reduce((n, c) => n + c.leaves.length, 0)).toBeGreaterThan(80);
  });

  it('the detector: NUL and unpaired surrogates only', () => {
    expect(isBadString('a\u0000b')).toBe(true);
    expect(isBadString('\uD800')).toBe(true);
    expect(isBadString('x\uDC00')).toBe(true);
    expect(isBadString('\uDC00\uD800')).toBe(true);
    expect(isBadString('emoji \uD83D\uDE00 ok é')).toBe(false);
    expect(isBadString('')).toBe(false);
  });

  it('every string position of every root field, as a variable: refused, typed where the result allows, nothing written', async () => {
    const before = await digest();
    let n = 0;
    for (const call of calls) {
      for (const leaf of call.leaves) {
        await check(call, leaf, `x\u0000y`, 'variables');
        await check(call, leaf, `\uD800tail`, 'variables');
        n += 2;
      }
    }
    expect(n).toBeGreaterThan(160);
    expect(await digest()).toEqual(before);
  }, 180_000);

  it('generated bad strings anywhere, in variables or inline literals (fast-check): never INTERNAL_SERVER_ERROR, never a write', async () => {
    const before = await digest();
    const positions = calls.flatMap((call) => call.leaves.map((leaf) => ({ call, leaf })));
    // Positions by index, so a counterexample prints as `[index, bad, mode]` (see `where` in the assertion).
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: positions.length - 1 }), badString, fc.constantFrom('variables' as const, 'literal' as const), async (i, bad, mode) => {
        const { call, leaf } = positions[i];
        await check(call, leaf, bad, leaf.literal ? mode : 'variables');
      }),
      { numRuns: 300 },
    );
    expect(await digest()).toEqual(before);
  }, 180_000);

  it('the same generated call without the bad byte does write (the no-write check can fail)', async () => {
    const before = await digest();
    const call = calls.find((c) => c.field.name === 'createSession')!;
    const a = await send(call, call.args, 'variables');
    expect(a.data.createSession.__typename).toBe('Session');
    expect((await digest()).sessions).not.toEqual(before.sessions);
  });

  it('fields are named as the domain names them: input fields and list items, a JSON value as a whole', async () => {
    const M = `mutation($input: AppendMessageInput!) { appendMessage(input: $input) { __typename ... on InvalidRequestError { field } } }`;
    const input = (parts: unknown[]) => ({ sessionID: ids.session, role: 'USER', origin: 'PROMPT', parts });
    expect((await g.gql(M, { input: input([{ type: 'TEXT', text: 'ok' }, { type: 'TEXT', text: 'b\u0000' }]) })).data.appendMessage)
      .toEqual({ __typename: 'InvalidRequestError', field: 'parts[1].text' });
    expect((await g.gql(M, { input: input([{ type: 'TOOL', tool: 't', input: { deep: [{ x: '\uD800' }] } }]) })).data.appendMessage)
      .toEqual({ __typename: 'InvalidRequestError', field: 'parts[0].input' });
    // A single item where a list is expected (GraphQL input coercion): named without an index.
    const lit = await g.gql(`mutation { appendMessage(input: { sessionID: "${ids.session}", role: USER, origin: PROMPT, parts: { type: TEXT, text: "\\u0000" } }) { __typename ... on InvalidRequestError { field } } }`);
    expect(lit.data.appendMessage).toEqual({ __typename: 'InvalidRequestError', field: 'parts.text' });
  });

  it('a refused field answers alone: the other root fields of the mutation run', async () => {
    const r = await g.gql(`mutation($m: JSON) {
      bad: createSession(input: { directory: "/fuzz/ok", metadata: $m }) { __typename ... on InvalidRequestError { field message code } }
      good: createSession(input: { directory: "/fuzz/ok", title: "fine" }) { __typename ... on Session { directory } } }`, { m: { list: ['ok', 'bad\uDFFF'] } });
    expect(r.errors).toBeUndefined();
    expect(r.data.bad).toMatchObject({ __typename: 'InvalidRequestError', field: 'metadata', code: 400 });
    expect(r.data.good).toEqual({ __typename: 'Session', directory: '/fuzz/ok' });
  });

  it('the same document answered first with clean variables still refuses bad ones, and a bad literal is refused every time', async () => {
    // The check remembers per document that its literals are clean, never that a request was.
    const Q = `query($id: ID!, $after: String) { session(id: $id) { id messages(after: $after) { edges { cursor } } } }`;
    expect((await g.gql(Q, { id: ids.session })).errors).toBeUndefined();
    expect(codes((await g.gql(Q, { id: ids.session, after: 'x\uD800' })) as any)).toEqual(['BAD_USER_INPUT']);
    expect(codes((await g.gql(Q, { id: `${ids.session}\u0000` })) as any)).toEqual(['BAD_USER_INPUT']);
    expect((await g.gql(Q, { id: ids.session })).errors).toBeUndefined();
    const lit = `query { session(id: "${ids.session}") { messages(after: "\\u0000") { edges { cursor } } } }`;
    for (let i = 0; i < 2; i++) expect(codes((await g.gql(lit)) as any)).toEqual(['BAD_USER_INPUT']);
  });

  it('a bad byte in a nested field argument, a fragment or a variable default refuses the whole operation', async () => {
    const before = await digest();
    const nested = await g.gql(`mutation($a: String) { createSession(input: { directory: "/fuzz/n" }) { ... on Session { children(after: $a) { edges { cursor } } } } }`, { a: 'c\u0000' });
    expect(codes(nested as any)).toEqual(['BAD_USER_INPUT']);
    const frag = await g.gql(`query($id: ID!) { ...F } fragment F on Query { session(id: $id) { id } }`, { id: 'ses_\u0000' });
    expect(codes(frag as any)).toEqual(['BAD_USER_INPUT']);
    const dflt = await g.gql(`query($id: ID! = "ses_\\u0000") { session(id: $id) { id } }`);
    expect(codes(dflt as any)).toEqual(['BAD_USER_INPUT']);
    expect(await digest()).toEqual(before);
  });
});

test('DateTime is strict ISO 8601 with a zone: what JavaScript\'s Date would also accept is refused, nothing stored', async () => {
  const q = `mutation($input: AppendMessageInput!) { appendMessage(input: $input) { __typename ... on Message { parts { ... on TextPart { text } } } } }`;
  const before = await g.sql`SELECT count(*)::int AS n FROM messages`;
  for (const bad of ['0', '2026-12-01', '12/01/2026', '2026-12-01T09:15:00', 'Tue Dec 01 2026', '0\u0000']) {
    const r = await g.gql(q, { input: { sessionID: ids.session, role: 'USER', origin: 'PROMPT', parts: [{ type: 'TEXT', text: 'x', startedAt: bad }] } }, host.token);
    expect(r.errors?.[0]?.message, bad).toContain('DateTime must be an ISO 8601 string');
  }
  expect(await g.sql`SELECT count(*)::int AS n FROM messages`).toEqual(before);
  const good = await g.gql(q, { input: { sessionID: ids.session, role: 'USER', origin: 'PROMPT', parts: [{ type: 'TEXT', text: 'x', startedAt: '2026-12-01T09:15:00.123+01:00' }] } }, host.token);
  expect(good.errors).toBeUndefined();
  expect(good.data.appendMessage.__typename).toBe('Message');
});

