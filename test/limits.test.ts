// Every limit answers an error a client can act on: `extensions.code` names the limit, `limit` is the number
// exceeded and `found` what the operation has (server/limits.ts), over HTTP and WebSocket alike. A field
// repeated a thousand times is a REPEATED_FIELD_LIMIT, not graphql-js' bare "Validation aborted.". Field
// suggestions ("Did you mean …?") are shown: every caller that reaches validation has a token, and every role
// may read the schema; a request without a token is refused before its document is read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, MAX_DIRECTIVES, MAX_REPEATED_FIELDS } from '../server/limits.js';
import { gql, startTestGateway, subscribe, type TestGateway } from './harness.js';

let g: TestGateway;
beforeAll(async () => { g = await startTestGateway(); });
afterAll(async () => { await g?.stop(); });

const nest = (levels: number) => `{ session(id: "ses_x") { ${'parent { '.repeat(levels)}id${' }'.repeat(levels)} } }`;

/** Each limit: an operation over it (query and subscription forms), and the error it must answer. */
const cases = [
  {
    limit: 'depth', query: nest(14), subscription: `subscription { executionSettled { execution { session { ${'parent { '.repeat(12)}id${' }'.repeat(12)} } } } }`,
    error: { code: 'DEPTH_LIMIT', limit: DEFAULT_LIMITS.maxDepth }, found: { query: 16, subscription: 16 }, message: /^The operation's depth is \d+; the limit is 12 \(MAX_DEPTH\)\.$/,
  },
  {
    limit: 'aliases', query: `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: sessions(first: 1) { pageInfo { hasNextPage } }`).join(' ')} }`,
    subscription: `subscription { executionSettled { ${Array.from({ length: 31 }, (_, i) => `a${i}: cursor`).join(' ')} } }`,
    error: { code: 'ALIAS_LIMIT', limit: DEFAULT_LIMITS.maxAliases }, found: { query: 31, subscription: 31 }, message: /^The operation has 31 aliases; the limit is 30 \(MAX_ALIASES\)\.$/,
  },
  {
    limit: 'directives', query: `{ sessions(first: 1) { pageInfo { ${Array.from({ length: 21 }, (_, i) => `h${i}: hasNextPage @include(if: true)`).join(' ')} } } }`,
    subscription: `subscription { executionSettled { ${Array.from({ length: 21 }, () => 'cursor @include(if: true)').join(' ')} } }`,
    error: { code: 'DIRECTIVE_LIMIT', limit: MAX_DIRECTIVES }, found: { query: 21, subscription: 21 }, message: /^The operation has 21 directives; the limit is 20\.$/,
  },
  {
    limit: 'tokens', query: `{ ${'__typename '.repeat(DEFAULT_LIMITS.maxTokens)} }`, subscription: `subscription { executionSettled { ${'cursor '.repeat(DEFAULT_LIMITS.maxTokens)} } }`,
    error: { code: 'TOKEN_LIMIT', limit: DEFAULT_LIMITS.maxTokens }, found: null, message: /^The operation has more than 5000 tokens; the limit is 5000 \(MAX_TOKENS\)\.$/,
  },
  {
    limit: 'repeated fields', query: `{ ${'__typename '.repeat(1_000)} }`, subscription: `subscription { executionSettled { ${'cursor '.repeat(1_000)} } }`,
    error: { code: 'REPEATED_FIELD_LIMIT', limit: MAX_REPEATED_FIELDS }, found: { query: 1_000, subscription: 1_000 },
    message: /^The field "(__typename|cursor)" is selected 1000 times in one selection set; the limit is 100\. Select each field once\.$/,
  },
  {
    limit: 'cost', query: '{ sessions(first: 100) { edges { node { executions(first: 100) { edges { node { messages(first: 100) { edges { node { id } } } } } } } } } }',
    // Two pages of 100 deep, with 28 fields (aliases of id) on each of their 10,000 rows: over 250,000.
    subscription: `subscription { executionSettled { execution { session { executions(first: 100) { edges { node { messages(first: 100) { edges { node { ${Array.from({ length: 28 }, (_, i) => `i${i}: id`).join(' ')} } } } } } } } } } }`,
    error: { code: 'COST_LIMIT', limit: DEFAULT_LIMITS.maxCost }, found: { query: 1_010_101 + 2_020_200, subscription: expect.any(Number) },
    message: /^The operation may return up to \d+ objects; the limit is 250000 \(MAX_COST\)\./,
  },
];

describe('each limit has its code and numbers', () => {
  for (const c of cases) {
    it(`${c.limit}, over HTTP`, async () => {
      const r = await g.gql(c.query);
      expect(r.data).toBeUndefined();
      const e = r.errors?.find((x) => x.extensions?.code === c.error.code);
      expect(e, JSON.stringify(r.errors)).toBeDefined();
      expect(e!.message).toMatch(c.message);
      expect(e!.extensions).toMatchObject(c.error);
      if (c.found) expect(e!.extensions!.found).toEqual(c.found.query);
    });

    it(`${c.limit}, over WebSocket`, async () => {
      const sub = subscribe(g.ws(), c.subscription);
      await expect.poll(() => sub.errors.length, { timeout: 10_000 }).toBe(1);
      const e = (sub.errors[0] as { message: string; extensions?: Record<string, unknown> }[]).find((x) => x.extensions?.code === c.error.code);
      expect(e, JSON.stringify(sub.errors)).toBeDefined();
      expect(e!.extensions).toMatchObject(c.error);
      if (c.found) expect(e!.extensions!.found).toEqual(c.found.subscription);
    });
  }

  it('a document under every limit that still exhausts graphql-js\' validation budget says so (VALIDATION_BUDGET)', async () => {
    // 60 identical fields with 60 identical subfields each: compared pairwise at both levels.
    const r = await g.gql(`{ ${Array.from({ length: 60 }, () => `session(id: "ses_x") { ${'__typename '.repeat(60)} }`).join(' ')} }`);
    expect(r.errors).toEqual([expect.objectContaining({
      message: expect.stringMatching(/^The operation is too costly to validate: graphql-js gave up comparing/),
      extensions: { code: 'VALIDATION_BUDGET' },
    })]);
  });

  it('an operation at every limit runs', async () => {
    const r = await g.gql(`{ ${Array.from({ length: 30 }, (_, i) => `a${i}: sessions(first: 1) { pageInfo { hasNextPage } }`).join(' ')} ${nest(10).slice(2, -2)} ${'__typename '.repeat(100)} }`);
    expect(r.errors).toBeUndefined();
    expect(r.data.a29.pageInfo.hasNextPage).toBe(false);
  });
});

describe('field suggestions', () => {
  it('are shown to every role (each may read the schema), over HTTP and WebSocket', async () => {
    for (const token of [g.admin, await g.token('reader'), await g.token('host')]) {
      const r = await g.gql('{ sesions(first: 1) { pageInfo { hasNextPage } } }', undefined, token);
      expect(r.errors?.[0].message).toBe('Cannot query field "sesions" on type "Query". Did you mean "sessions" or "session"?');
    }
    const sub = subscribe(g.ws(await g.token('reader')), 'subscription { executionSetled { cursor } }');
    await expect.poll(() => sub.errors.length, { timeout: 10_000 }).toBe(1);
    expect(JSON.stringify(sub.errors)).toContain('Did you mean \\"executionSettled\\"?');
  });

  it('never reach a request without a token (refused before validation)', async () => {
    const r = await gql(g.url, null, '{ sesions(first: 1) { pageInfo { hasNextPage } } }');
    expect(r.status).toBe(401);
    expect(JSON.stringify(r)).not.toMatch(/sesions|Did you mean/);
  });
});
