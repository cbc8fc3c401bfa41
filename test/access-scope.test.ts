import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startTestGateway, type TestGateway } from './harness.js';
import { coversScope, inScope, scopeCondition, type Actor } from '../domain/access.js';

/**
 * The directory scope is decided in two places: in TypeScript (`inScope`, for rows already read) and in
 * SQL (`scopeCondition`, for lists, token revocation and listing, host commands). They must agree for
 * every prefix and directory, LIKE's metacharacters included (`%`, `_`, `\`), or a scoped token would see
 * in a list what it cannot open, or revoke a token it cannot list.
 */

let g: TestGateway;
beforeAll(async () => { g = await startTestGateway(); });
afterAll(async () => { await g?.stop(); });

const segment = fc.stringMatching(/^[ab%_\\.x-]{1,3}$/);
const directory = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => '/' + s.join('/'));
const prefix = fc.oneof(directory, directory.map((d) => d + '/'), fc.constant('/'));

async function sqlInScope(actor: Actor, dirs: (string | null)[]): Promise<boolean[]> {
  const rows = await g.sql<{ ok: boolean; i: number }[]>`
    SELECT coalesce(${scopeCondition(g.sql, actor, 'directory')}, false) AS ok, i
    FROM unnest(${g.sql.array(dirs as string[])}::text[]) WITH ORDINALITY AS t(directory, i) ORDER BY i`;
  return rows.map((r) => r.ok);
}

describe('directory scopes: TypeScript and SQL agree', () => {
  it('inScope and scopeCondition give the same answer for generated prefixes and directories', async () => {
    await fc.assert(
      fc.asyncProperty(prefix, fc.array(directory, { minLength: 1, maxLength: 20 }), async (p, dirs) => {
        const actor: Actor = { tokenID: 't', role: 'admin', directory: p };
        // Directories under the prefix, its siblings with a common start, and the prefix itself.
        const base = p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
        const all = [...dirs, base, base + 'x', base + '/x', base + '_', base.replace(/[_%]/g, 'x')];
        expect(await sqlInScope(actor, all)).toEqual(all.map((d) => inScope(actor, d)));
      }),
      { numRuns: 200 },
    );
  });

  it('the fixed cases: /a covers /a and /a/b, not /ab; LIKE metacharacters are literal', async () => {
    const a: Actor = { tokenID: 't', role: 'reader', directory: '/a' };
    expect(await sqlInScope(a, ['/a', '/a/b', '/ab', '/', '/b/a'])).toEqual([true, true, false, false, false]);
    const meta: Actor = { tokenID: 't', role: 'reader', directory: '/a_%' };
    expect(await sqlInScope(meta, ['/a_%', '/a_%/x', '/ab%', '/axy', '/a_%x'])).toEqual([true, true, false, false, false]);
    const slash: Actor = { tokenID: 't', role: 'reader', directory: '/a\\' };
    expect(await sqlInScope(slash, ['/a\\', '/a\\/x', '/a', '/ab'])).toEqual([true, true, false, false]);
  });

  it('a NULL directory (an unscoped token) is covered only by unscoped actors', async () => {
    const scoped: Actor = { tokenID: 't', role: 'admin', directory: '/' };
    const unscoped: Actor = { tokenID: 't', role: 'admin', directory: null };
    expect(await sqlInScope(scoped, [null, '/x'])).toEqual([false, true]);
    expect(await sqlInScope(unscoped, [null, '/x'])).toEqual([true, true]);
    expect(coversScope(scoped, null)).toBe(false);
    expect(coversScope(scoped, '/x')).toBe(true);
    expect(coversScope(unscoped, null)).toBe(true);
  });
});

describe('createSession(hostID): only a host whose scope covers the session', () => {
  it('a host registered with a token scoped elsewhere reads like an unknown host; one scoped above or unscoped is accepted', async () => {
    const { registerHost } = await import('./fixtures.js');
    const hostB = await registerHost(g, { token: await g.token('host', '/b') });
    const hostA = await registerHost(g, { token: await g.token('host', '/a') });
    const hostAny = await registerHost(g);
    const create = async (token: string, directory: string, hostID: string) => {
      const r = await g.gql(`mutation($input: CreateSessionInput!) { createSession(input: $input) {
        __typename ... on Session { id } ... on InvalidRequestError { field message } } }`, { input: { directory, hostID } }, token);
      if (r.errors) throw new Error(JSON.stringify(r.errors));
      const out = r.data.createSession;
      if (out.__typename === 'Session') out.hostID = (await g.sql`SELECT host_id FROM sessions WHERE id = ${out.id}`)[0].hostId;
      return out;
    };
    for (const token of [await g.token('plugin', '/a'), await g.token('plugin'), g.admin]) {
      const refused = await create(token, '/a/x', hostB.hostID);
      expect(refused).toMatchObject({ __typename: 'InvalidRequestError', field: 'hostID' });
      // Nothing was created for the refused call.
      const [{ n }] = await g.sql`SELECT count(*)::int AS n FROM sessions WHERE host_id = ${hostB.hostID}`;
      expect(n).toBe(0);
      expect(await create(token, '/a/x', hostA.hostID)).toMatchObject({ __typename: 'Session', hostID: hostA.hostID });
      expect(await create(token, '/a', hostA.hostID)).toMatchObject({ __typename: 'Session' });
      expect(await create(token, '/a/x', hostAny.hostID)).toMatchObject({ __typename: 'Session', hostID: hostAny.hostID });
    }
    // '/ab' is not under '/a'.
    expect(await create(g.admin, '/ab', hostA.hostID)).toMatchObject({ __typename: 'InvalidRequestError', field: 'hostID' });
  });
});
