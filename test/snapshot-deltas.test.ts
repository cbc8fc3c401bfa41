import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, rmSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { print } from 'graphql';
import fc from 'fast-check';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { startTestGateway, type TestGateway } from './harness.js';
import { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { GatewayClient } from '../client/index.js';
import { changesetKit, write } from './support/changeset-kit.js';
import { readPolicy, setPolicy, type Policy } from '../domain/snapshots.js';
import { pruneChangesets } from '../domain/changesets.js';

let g: TestGateway;
let host: ReferenceHost;
let policy: Policy;
const dirs: string[] = [];

beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  host = new ReferenceHost({ url: g.url, token: await g.token('host'), leaseMs: 600_000 });
  await host.start();
  policy = await readPolicy(g.sql);
});
afterAll(async () => {
  await host?.stop();
  await g?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const { worktree, newSession, read, runExecution, count } = changesetKit(() => ({ g, host }), dirs);
let hostTok: string | null = null;
async function hostToken() { return (hostTok ??= await g.token('host')); }

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const CREATE = `mutation($input: CreateSnapshotInput!) { createSnapshot(input: $input) {
  __typename ... on Error { message } ... on InvalidRequestError { field } ... on ContentMissingError { hashes } ... on Snapshot { id fileCount byteSize } } }`;
const UPLOAD = `mutation($input: UploadContentsInput!) { uploadContents(input: $input) { __typename } }`;

async function create(input: Record<string, unknown>) {
  const r = await g.gql(CREATE, { input }, await hostToken());
  expect(r.errors).toBeUndefined();
  return r.data.createSnapshot;
}
async function upload(texts: (string | Buffer)[]) {
  const r = await g.gql(UPLOAD, { input: { contents: texts.map((t) => ({ hash: sha(t), base64: Buffer.from(t).toString('base64') })) } }, await hostToken());
  expect(r.data.uploadContents.__typename).toBe('ContentsUploaded');
}
async function stored(snapshotID: string) {
  const [s] = await g.sql`SELECT manifest, file_count, byte_size, pruned_at FROM snapshots WHERE id = ${snapshotID}`;
  return s;
}

/** The test's own client: records every createSnapshot request body it sends (size and input) and its answer. */
class RecordingClient extends GatewayClient {
  sent: { bytes: number; input: any; answer: string }[] = [];
  override async request<TData, TVars extends Record<string, unknown>>(doc: TypedDocumentNode<TData, TVars>, variables?: TVars): Promise<TData> {
    const name = doc.definitions.find((d) => d.kind === 'OperationDefinition')?.name?.value;
    const data = await super.request(doc, variables);
    if (name === 'CreateSnapshot') {
      // The same body GatewayClient.request sends.
      const bytes = Buffer.byteLength(JSON.stringify({ query: print(doc), variables }));
      this.sent.push({ bytes, input: (variables as any).input, answer: (Object.values(data as any)[0] as any).__typename });
    }
    return data;
  }
}

// ---- random manifests -------------------------------------------------------------------------

const TEXTS = ['one\n', 'two\nlines\n', 'three\n3\n3\n', '', 'no newline', 'x\n'.repeat(40)];
const BIN = Buffer.from([0, 1, 2, 3, 255]);
interface Entry { path: string; kind: string; hash?: string | null; size: number; mode: number; binary?: boolean; mtimeMs?: number | null; count?: number | null }

const segment = fc.constantFrom('a', 'b', 'c');
const pathArb = fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join('/'));
const entryArb = (p: fc.Arbitrary<string>): fc.Arbitrary<Entry> => fc.oneof(
  fc.tuple(p, fc.nat(TEXTS.length - 1), fc.constantFrom(0o100644, 0o100755, 0o120000))
    .map(([path, i, mode]) => ({ path, kind: 'FILE', hash: sha(TEXTS[i]), size: Buffer.byteLength(TEXTS[i]), mode, binary: false })),
  p.map((path) => ({ path, kind: 'FILE', hash: sha(BIN), size: BIN.length, mode: 0o100644, binary: true })),
  fc.tuple(p, fc.nat(3), fc.integer({ min: 5_000_000, max: 9_000_000 }))
    .map(([path, i, size]) => ({ path, kind: 'OVERSIZE', hash: sha(`big ${i}`), size, mode: 0o100644, binary: false })),
  fc.tuple(p, fc.nat(3), fc.nat(3))
    .map(([path, t, s]) => ({ path, kind: 'IGNORED', size: s, mode: 0o100644, mtimeMs: 1_700_000_000_000 + t })),
  fc.tuple(p, fc.nat(3), fc.integer({ min: 1, max: 50 }))
    .map(([path, i, n]) => ({ path, kind: 'IGNORED_DIR', hash: sha(`dir ${i}`), size: n * 10, mode: 0o040000, count: n })),
);
/** Whether adding `p` keeps every entry off every other entry's subtree. */
const fits = (paths: Iterable<string>, p: string) => {
  for (const q of paths) if (q !== p && (q.startsWith(p + '/') || p.startsWith(q + '/'))) return false;
  return true;
};
function manifestOf(entries: Entry[]): Map<string, Entry> {
  const m = new Map<string, Entry>();
  for (const e of entries) if (!m.has(e.path) && fits(m.keys(), e.path)) m.set(e.path, e);
  return m;
}
type Edit = { op: 'remove'; i: number } | { op: 'set'; e: Entry };
const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.nat(50).map((i) => ({ op: 'remove' as const, i })),
  entryArb(pathArb).map((e) => ({ op: 'set' as const, e })),
);
const unscannedArb = fc.array(pathArb.map((p) => ({ path: p, detail: 'limit' })), { maxLength: 2 })
  .map((us) => [...new Map(us.map((u) => [u.path, u])).values()]);
const same = (a: Entry, b: Entry) => JSON.stringify([a.kind, a.hash ?? null, a.size, a.mode, !!a.binary, a.mtimeMs ?? null, a.count ?? null]) ===
  JSON.stringify([b.kind, b.hash ?? null, b.size, b.mode, !!b.binary, b.mtimeMs ?? null, b.count ?? null]);

describe('createSnapshot with a base (delta)', () => {
  it('random manifests and random edits store, through a delta, the same manifest and freeze the same changeset as a full upload (property)', async () => {
    await upload([...TEXTS, BIN]);
    await fc.assert(fc.asyncProperty(
      fc.array(entryArb(pathArb), { maxLength: 14 }),
      fc.array(editArb, { maxLength: 10 }),
      fc.boolean(), unscannedArb, fc.option(fc.constant('another tool'), { nil: undefined }), fc.integer({ min: 0, max: 2 ** 31 }),
      async (initial, edits, resend, unscanned, partial, seed) => {
        const sessionID = await newSession();
        const m0 = manifestOf(initial);
        const m1 = new Map(m0);
        for (const ed of edits) {
          if (ed.op === 'remove') { const keys = [...m1.keys()]; if (keys.length) m1.delete(keys[ed.i % keys.length]); }
          else if (fits(m1.keys(), ed.e.path)) m1.set(ed.e.path, ed.e);
        }
        // The delta: entries added or changed (optionally some unchanged ones again), paths gone.
        const files = [...m1.values()].filter((e, i) => { const b = m0.get(e.path); return !b || !same(b, e) || (resend && (i + seed) % 3 === 0); });
        const removed = [...m0.keys()].filter((p) => !m1.has(p));
        const shuffle = <T>(xs: T[]) => xs.map((x, i) => [x, (i * 7919 + seed) % 104729] as const).sort((a, b) => a[1] - b[1]).map(([x]) => x);

        const s0 = await create({ sessionID, files: shuffle([...m0.values()]), unscanned: [{ path: 'old', detail: 'not inherited' }], partial: 'not inherited' });
        expect(s0.__typename).toBe('Snapshot');
        const viaDelta = await create({ sessionID, base: s0.id, files: shuffle(files), removed: shuffle(removed), unscanned, partial });
        const viaFull = await create({ sessionID, files: [...m1.values()], unscanned, partial });
        expect(viaDelta.__typename).toBe('Snapshot');
        expect(viaFull.__typename).toBe('Snapshot');
        expect([viaDelta.fileCount, viaDelta.byteSize]).toEqual([viaFull.fileCount, viaFull.byteSize]);
        const [d, f] = [await stored(viaDelta.id), await stored(viaFull.id)];
        expect(d.manifest).toEqual(f.manifest);
        expect(d.manifest.files.map((e: any) => e.p)).toEqual([...m1.keys()].sort());

        const freeze = async (end: string) => {
          const e: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: s0.id });
          await host.settleExecution(e.id, 'SUCCEEDED', { endSnapshot: end });
          const x = await read(e.id);
          return { changeset: x.changeset, end: { fileCount: x.boundary.end.fileCount, byteSize: x.boundary.end.byteSize } };
        };
        expect(await freeze(viaDelta.id)).toEqual(await freeze(viaFull.id));
      },
    ), { numRuns: 40 });
  });

  it('a capturer sending deltas over random worktree edits stores what a capturer sending whole manifests stores (property)', async () => {
    const names = ['f1.txt', 'f2.txt', 'f3.log', 'f4.bin'];
    const fileArb = fc.tuple(fc.constantFrom('', 'd1/', 'd1/d2/', 'd3/'), fc.constantFrom(...names)).map(([d, n]) => d + n);
    const contentArb = fc.oneof(fc.constantFrom(...TEXTS), fc.constant('binary'));
    type Op = { op: 'write'; p: string; c: string } | { op: 'rm'; p: string } | { op: 'chmod'; p: string } | { op: 'touch'; p: string };
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.tuple(fileArb, contentArb).map(([p, c]) => ({ op: 'write' as const, p, c })),
      fileArb.map((p) => ({ op: 'rm' as const, p })),
      fileArb.map((p) => ({ op: 'chmod' as const, p })),
      fileArb.map((p) => ({ op: 'touch' as const, p })), // same size, new mtime (what an ignored file records)
    );
    const apply = (root: string, o: Op, k: number) => {
      const abs = path.join(root, o.p);
      if (o.op === 'write') write(root, o.p, o.c === 'binary' ? Buffer.concat([BIN, Buffer.from(String(k))]) : o.c);
      else if (o.op === 'rm') rmSync(abs, { force: true });
      else if (o.op === 'chmod') { try { chmodSync(abs, 0o755); } catch { /* absent */ } }
      else { try { utimesSync(abs, 1_600_000_000 + k, 1_600_000_000 + k); } catch { /* absent */ } }
    };
    await fc.assert(fc.asyncProperty(
      fc.array(fc.tuple(fileArb, contentArb), { maxLength: 10 }),
      fc.array(fc.array(opArb, { maxLength: 6 }), { minLength: 1, maxLength: 3 }),
      async (initial, rounds) => {
        const sessionID = await newSession();
        const root = worktree({ '.gitignore': '*.log\nd3/\n' });
        initial.forEach(([p, c], k) => apply(root, { op: 'write', p, c }, k));
        const deltas = new WorktreeCapturer();
        const whole = new WorktreeCapturer({ deltas: false });
        const d0 = await deltas.snapshot(host.client, sessionID, root, host.id);
        const f0 = await whole.snapshot(host.client, sessionID, root, host.id);
        expect(d0.delta).toBeNull();
        let dn = d0, fn = f0;
        for (const [r, ops] of rounds.entries()) {
          ops.forEach((o, k) => apply(root, o, 100 * r + k));
          dn = await deltas.snapshot(host.client, sessionID, root, host.id);
          fn = await whole.snapshot(host.client, sessionID, root, host.id);
          expect(dn.delta).not.toBeNull();
          expect(fn.delta).toBeNull();
          expect((await stored(dn.id)).manifest).toEqual((await stored(fn.id)).manifest);
        }
        const freeze = async (start: string, end: string) => {
          const e: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: start });
          await host.settleExecution(e.id, 'SUCCEEDED', { endSnapshot: end });
          return (await read(e.id)).changeset;
        };
        expect(await freeze(d0.id, dn.id)).toEqual(await freeze(f0.id, fn.id));
      },
    ), { numRuns: 12 });
  });

  it('refuses every bad delta with a typed error naming the field, storing nothing', async () => {
    const sessionID = await newSession();
    const other = await newSession();
    await upload(['a\n', 'b\n', 'c\n']);
    const file = (p: string, t = 'a\n') => ({ path: p, kind: 'FILE', hash: sha(t), size: Buffer.byteLength(t), mode: 0o100644 });
    const base = await create({ sessionID, files: [file('x'), file('dir/y', 'b\n'), file('z', 'c\n')] });
    const foreign = await create({ sessionID: other, files: [file('x')] });
    expect([base.__typename, foreign.__typename]).toEqual(['Snapshot', 'Snapshot']);
    const never = sha('never uploaded');
    const before = await count('snapshots');
    const cases: [Record<string, unknown>, string, string][] = [
      [{ files: [file('x')], removed: [] }, 'InvalidRequestError', 'removed'],
      [{ files: [], removed: ['x'] }, 'InvalidRequestError', 'removed'],
      [{ base: foreign.id, files: [] }, 'InvalidRequestError', 'base'],
      [{ base: 'snp_doesnotexist', files: [] }, 'InvalidRequestError', 'base'],
      [{ base: 'not-an-id', files: [] }, 'InvalidRequestError', 'base'],
      [{ base: base.id, files: [], removed: ['x', 'nope'] }, 'InvalidRequestError', 'removed[1]'],
      [{ base: base.id, files: [], removed: ['dir'] }, 'InvalidRequestError', 'removed[0]'],
      [{ base: base.id, files: [], removed: ['x', 'x'] }, 'InvalidRequestError', 'removed[1]'],
      [{ base: base.id, files: [file('z', 'b\n')], removed: ['x', 'z'] }, 'InvalidRequestError', 'removed[1]'],
      [{ base: base.id, files: [], removed: ['../x'] }, 'InvalidRequestError', 'removed[0]'],
      [{ base: base.id, files: [file('n'), file('n')] }, 'InvalidRequestError', 'files[1].path'],
      [{ base: base.id, files: [file('x/below')] }, 'InvalidRequestError', 'files'],
      [{ base: base.id, files: [{ path: 'dir', kind: 'IGNORED_DIR', hash: sha('d'), size: 1, mode: 0o040000, count: 1 }] }, 'InvalidRequestError', 'files'],
      [{ base: base.id, files: [file('n', 'a\n'), { ...file('m'), hash: 'nothex' }] }, 'InvalidRequestError', 'files[1].hash'],
      [{ base: base.id, files: [{ ...file('n'), size: 5 }] }, 'InvalidRequestError', 'files'],
      [{ base: base.id, files: [{ ...file('n'), size: -1 }] }, 'InvalidRequestError', 'files[0].size'],
      [{ base: base.id, files: [file('/abs')] }, 'InvalidRequestError', 'files[0].path'],
      [{ base: base.id, files: [file('n', 'never uploaded')] }, 'ContentMissingError', ''],
    ];
    for (const [input, type, field] of cases) {
      const r = await create({ sessionID, ...input });
      expect({ input, r }).toMatchObject({ input, r: type === 'ContentMissingError' ? { __typename: type, hashes: [never] } : { __typename: type, field } });
    }
    // The composed manifest is held to the entry limit, though the delta itself is small.
    await setPolicy(g.sql, { maxManifestFiles: 3 });
    try {
      expect(await create({ sessionID, base: base.id, files: [file('n')] })).toMatchObject({ __typename: 'InvalidRequestError', field: 'files' });
      // Within the limit once an entry goes.
      const ok = await create({ sessionID, base: base.id, files: [file('n')], removed: ['z'] });
      expect(ok).toMatchObject({ __typename: 'Snapshot', fileCount: 3 });
    } finally {
      await setPolicy(g.sql, { maxManifestFiles: policy.maxManifestFiles });
    }
    // And a good delta against the same base is stored, with its base's entries.
    const good = await create({ sessionID, base: base.id, files: [file('x', 'b\n'), file('new')], removed: ['dir/y'] });
    expect(good).toMatchObject({ __typename: 'Snapshot', fileCount: 3 });
    expect(await count('snapshots')).toBe(before + 2); // only the two good ones
    expect((await stored(good.id)).manifest.files.map((e: any) => [e.p, e.h])).toEqual([['new', sha('a\n')], ['x', sha('b\n')], ['z', sha('c\n')]]);
  });

  it('a pruned base is refused (nothing stored), and the capturer falls back to the whole manifest', async () => {
    await setPolicy(g.sql, { retainMs: 0, retainExecutions: 0 });
    try {
      const sessionID = await newSession();
      const root = worktree({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'sub/c.txt': 'c\n' });
      const client = new RecordingClient(host.client.opts);
      const cap = new WorktreeCapturer();
      // E1's boundaries are made by `cap` (its end is cap's delta base); E2, by another capturer, settles after it.
      const e1 = await runExecution(sessionID, root, cap, () => write(root, 'a.txt', 'a2\n'));
      await runExecution(sessionID, root, new WorktreeCapturer(), () => write(root, 'b.txt', 'b2\n'));
      await pruneChangesets(g.sql);
      expect((await stored(e1.end.id)).pruned_at).not.toBeNull();
      expect((await read(e1.id)).changeset.coverage).toMatchObject({ __typename: 'CoverageUnavailable', reason: 'EXPIRED' });

      // The pruned snapshot as a base, directly: refused, nothing stored.
      const before = await count('snapshots');
      expect(await create({ sessionID, base: e1.end.id, files: [] })).toMatchObject({ __typename: 'InvalidRequestError', field: 'base' });
      expect(await count('snapshots')).toBe(before);

      write(root, 'sub/c.txt', 'c2\n');
      rmSync(path.join(root, 'b.txt'));
      const s = await cap.snapshot(client, sessionID, root, host.id);
      expect(s.delta).toBeNull();
      expect(client.sent.map((x) => [x.input.base ?? null, x.answer])).toEqual([[e1.end.id, 'InvalidRequestError'], [null, 'Snapshot']]);
      expect(client.sent[1].input.files.map((f: any) => f.path)).toEqual(['a.txt', 'sub/c.txt']);
      expect(await count('snapshots')).toBe(before + 1);
      expect((await stored(s.id)).manifest.files.map((e: any) => [e.p, e.h])).toEqual([['a.txt', sha('a2\n')], ['sub/c.txt', sha('c2\n')]]);
      // The next capture is a delta against the snapshot just made.
      write(root, 'a.txt', 'a3\n');
      const next = await cap.snapshot(client, sessionID, root, host.id);
      expect(next.delta).toEqual({ base: s.id, files: 1, removed: 0 });
      expect((await stored(next.id)).manifest.files.map((e: any) => [e.p, e.h])).toEqual([['a.txt', sha('a3\n')], ['sub/c.txt', sha('c2\n')]]);
    } finally {
      await setPolicy(g.sql, { retainMs: policy.retainMs, retainExecutions: policy.retainExecutions });
    }
  });

  it('a capture of 1 changed file in a 2,000-file worktree sends a small delta, not the manifest', async () => {
    const sessionID = await newSession();
    const files: Record<string, string> = {};
    for (let i = 0; i < 2_000; i++) files[`src/m${i % 20}/f${i}.ts`] = `export const v${i} = ${JSON.stringify(randomBytes(8).toString('hex'))};\n`;
    const root = worktree(files);
    const client = new RecordingClient(host.client.opts);
    const cap = new WorktreeCapturer();
    const whole = new WorktreeCapturer({ deltas: false });
    const first = await cap.snapshot(client, sessionID, root, host.id);
    expect(first.delta).toBeNull();
    write(root, 'src/m7/f7.ts', 'export const v7 = "changed";\n');
    rmSync(path.join(root, 'src/m8/f8.ts'));
    const second = await cap.snapshot(client, sessionID, root, host.id);
    const full = await whole.snapshot(client, sessionID, root, host.id);
    expect(second.delta).toEqual({ base: first.id, files: 1, removed: 1 });
    expect(second.uploaded).toBe(1);
    const [firstReq, deltaReq, fullReq] = client.sent;
    expect(deltaReq.input).toMatchObject({ base: first.id, removed: ['src/m8/f8.ts'], files: [{ path: 'src/m7/f7.ts' }] });
    expect(fullReq.input.files).toHaveLength(1_999);
    expect(firstReq.bytes).toBeGreaterThan(200_000);
    expect(deltaReq.bytes).toBeLessThan(2_000);
    expect(deltaReq.bytes * 100).toBeLessThan(fullReq.bytes);
    // Both requests stored the same manifest.
    expect((await stored(second.id)).manifest).toEqual((await stored(full.id)).manifest);
    expect(second.fileCount).toBe(1_999);
  });
});
