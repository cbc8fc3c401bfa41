import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { startTestGateway, type TestGateway } from './harness.js';

/**
 * Contents are stored once for the whole gateway, but whether the gateway holds some bytes is itself
 * information: a host scoped to one directory must not learn, through missingContents, uploadContents'
 * counts or createSnapshot's ContentMissingError, that another directory has a file with exactly these
 * bytes (a guessed secret, a config with a known password). Each directory sees only what it uploaded.
 */

let g: TestGateway;
beforeAll(async () => { g = await startTestGateway(); });
afterAll(async () => { await g?.stop(); });

const MISSING = `query($h: [String!]!) { missingContents(hashes: $h) { __typename ... on MissingContents { hashes } } }`;
const UPLOAD = `mutation($input: UploadContentsInput!) { uploadContents(input: $input) {
  __typename ... on ContentsUploaded { stored alreadyPresent } ... on Error { message } } }`;
const SNAP = `mutation($input: CreateSnapshotInput!) { createSnapshot(input: $input) {
  __typename ... on Snapshot { id } ... on ContentMissingError { hashes } ... on Error { message } } }`;
const CREATE = `mutation($d: String!) { createSession(input: { directory: $d }) { __typename ... on Session { id } } }`;

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function missing(token: string, hashes: string[]): Promise<string[]> {
  const r = await g.gql(MISSING, { h: hashes }, token);
  expect(r.errors).toBeUndefined();
  return r.data.missingContents.hashes;
}
async function upload(token: string, data: Buffer) {
  const r = await g.gql(UPLOAD, { input: { contents: [{ hash: sha(data), base64: data.toString('base64') }] } }, token);
  expect(r.errors).toBeUndefined();
  return r.data.uploadContents;
}
async function snapshot(token: string, sessionID: string, data: Buffer) {
  const r = await g.gql(SNAP, { input: { sessionID, files: [{ path: 'secret.env', kind: 'FILE', hash: sha(data), size: data.length, mode: 0o100644 }] } }, token);
  expect(r.errors).toBeUndefined();
  return r.data.createSnapshot;
}
async function session(directory: string): Promise<string> {
  const r = await g.gql(CREATE, { d: directory });
  expect(r.data.createSession.__typename).toBe('Session');
  return r.data.createSession.id;
}
const stored = async (hash: string) => Number((await g.sql`SELECT count(*)::int AS n FROM contents WHERE hash = ${hash}`)[0].n);

describe('the content store answers each directory for itself', () => {
  it('a host scoped to /b cannot tell that /a holds a content; uploading it stores no second copy', async () => {
    const [a, b, sub, unscoped] = await Promise.all([g.token('host', '/a'), g.token('host', '/b'), g.token('host', '/a/sub'), g.token('host')]);
    const secret = Buffer.concat([Buffer.from('PASSWORD='), randomBytes(16)]);
    const h = sha(secret);
    const other = sha(randomBytes(8));
    const sa = await session('/a/proj');
    const sb = await session('/b/proj');

    // /a uploads and snapshots it.
    expect(await missing(a, [h])).toEqual([h]);
    expect(await upload(a, secret)).toEqual({ __typename: 'ContentsUploaded', stored: 1, alreadyPresent: 0 });
    expect(await missing(a, [h, other])).toEqual([other]);
    expect((await snapshot(a, sa, secret)).__typename).toBe('Snapshot');

    // /b: every answer is the one it would get if /a had never uploaded it.
    expect(await missing(b, [h, other])).toEqual([h, other]);
    expect(await snapshot(b, sb, secret)).toEqual({ __typename: 'ContentMissingError', hashes: [h], message: expect.any(String) });
    expect(await g.sql`SELECT 1 FROM snapshots WHERE session_id = ${sb}`).toHaveLength(0);
    expect(await upload(b, secret)).toEqual({ __typename: 'ContentsUploaded', stored: 1, alreadyPresent: 0 });
    // Now /b holds it too; the bytes are still stored once.
    expect(await missing(b, [h])).toEqual([]);
    expect((await snapshot(b, sb, secret)).__typename).toBe('Snapshot');
    expect(await upload(b, secret)).toEqual({ __typename: 'ContentsUploaded', stored: 0, alreadyPresent: 1 });
    expect(await stored(h)).toBe(1);

    // A host below /a does not see what /a uploaded (/a is not within its scope); an unscoped host,
    // which may read every directory anyway, sees every content.
    expect(await missing(sub, [h])).toEqual([h]);
    expect(await missing(unscoped, [h, other])).toEqual([other]);
    expect(await upload(unscoped, secret)).toEqual({ __typename: 'ContentsUploaded', stored: 0, alreadyPresent: 1 });
  });

  it('what a host below the scope uploaded is held for the scope above it', async () => {
    const [a, sub] = await Promise.all([g.token('host', '/c'), g.token('host', '/c/sub')]);
    const data = randomBytes(32);
    expect(await upload(sub, data)).toMatchObject({ stored: 1, alreadyPresent: 0 });
    expect(await missing(a, [sha(data)])).toEqual([]);
    const s = await session('/c/proj');
    expect((await snapshot(a, s, data)).__typename).toBe('Snapshot');
  });

  it('many hosts of different directories uploading the same content at once: one stored copy, each told it stored it', async () => {
    const dirs = Array.from({ length: 12 }, (_, i) => `/race${i}`);
    const tokens = await Promise.all(dirs.map((d) => g.token('host', d)));
    const data = randomBytes(4096);
    const answers = await Promise.all(tokens.map((t) => upload(t, data)));
    for (const a of answers) expect(a).toEqual({ __typename: 'ContentsUploaded', stored: 1, alreadyPresent: 0 });
    expect(await stored(sha(data))).toBe(1);
    for (const t of tokens) expect(await missing(t, [sha(data)])).toEqual([]);
  });
});
