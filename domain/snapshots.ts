import { createHash } from 'node:crypto';
import type { Db, Sql, Tx } from '../db/connection.js';
import { scopeCondition, type Actor } from './access.js';
import { ContentMissingError, InvalidRequestError, SessionNotFoundError } from './errors.js';
import { newId } from './ids.js';
import { getSession } from './sessions.js';
import { rowKey } from './shard.js';
import { requireHost } from './hosts.js';
import { checkText, requireId } from './validate.js';
import { ADVISORY_LOCKS } from '../db/advisory-locks.js';

/**
 * Worktree snapshots: contents are uploaded first (content-addressed by SHA-256, stored once for all
 * snapshots and sessions), then a manifest that references them. A snapshot belongs to one session
 * and is what `beginExecution(startSnapshot)` / `settleExecution(endSnapshot)` take.
 *
 * A manifest is sent whole, or as a delta: `base` (an unpruned snapshot of the same session) plus
 * `removed` paths and the `files` entries added or changed since. The gateway composes the delta
 * with the base's stored manifest and validates the result exactly as a full manifest; `unscanned`
 * and `partial` are never inherited (they describe this capture). What is stored is always the
 * complete manifest, so freezing and retention never follow a chain of bases.
 *
 * Contents and manifests change state only under the content lock: shared for uploads, snapshot
 * creation, boundaries and freezing; exclusive for the retention sweep that deletes contents. So a
 * content checked to exist by one of the former cannot vanish before its transaction commits (the lock
 * is an advisory lock: it holds on the node that takes it, so on a Citus cluster every gateway connection
 * goes to the coordinator, docs/citus.md, where all instances take it). The
 * sweep deletes only contents no stored manifest references (a pruned snapshot's manifest is set to
 * NULL in the same sweep), so every stored-file content of an unpruned snapshot is held: a delta's
 * content check covers only the entries it sends, not those it inherits from its base.
 */
export const CONTENT_LOCK = ADVISORY_LOCKS.contents;
/** First key of the per-content upload locks (two-key advisory lock space); the second is contentLockKey. */
const CONTENT_UPLOAD_LOCK = ADVISORY_LOCKS.contentUpload;
/** A content's upload lock key: the first 32 bits of its SHA-256, as a signed int4. */
function contentLockKey(hash: string): number {
  return parseInt(hash.slice(0, 8), 16) | 0;
}
export async function contentLockShared(tx: Tx): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock_shared(${CONTENT_LOCK})`;
}

export type EntryKind = 'FILE' | 'OVERSIZE' | 'IGNORED' | 'IGNORED_DIR';
const KIND_CODE: Record<EntryKind, string> = { FILE: 'f', OVERSIZE: 'o', IGNORED: 'i', IGNORED_DIR: 'd' };

/** One entry of a manifest as a host sends it. */
export interface SnapshotFileInput {
  path: string;
  kind: EntryKind;
  /** SHA-256 (hex) of the content; for IGNORED_DIR the fingerprint of its metadata; optional for IGNORED. */
  hash?: string | null;
  size: number;
  mode: number;
  binary?: boolean | null;
  mtimeMs?: number | null;
  /** IGNORED_DIR: how many entries its fingerprint covers. */
  count?: number | null;
}

export interface UnscannedInput { path: string; detail?: string | null }

export interface CreateSnapshotInput {
  sessionID: string;
  hostID?: string | null;
  files: SnapshotFileInput[];
  unscanned?: UnscannedInput[] | null;
  /**
   * Set when the capture may have left out paths anywhere in the worktree, not only in the subtrees
   * listed as unscanned (a capture made by another tool whose filters cannot be replayed, such as an
   * OpenCode snapshot read from history); the text says why. A changeset with such a boundary lists
   * its files but reads CoverageOmitted, with a CAPTURE_LIMIT omission on the path ".".
   */
  partial?: string | null;
  /**
   * A snapshot of the same session, not pruned: this manifest is the base's, minus the entries at
   * `removed`, with the `files` entries added or replacing the base's entry at the same path.
   */
  base?: string | null;
  /** Paths of the base's entries that this capture no longer has (only with `base`). */
  removed?: string[] | null;
}

/** Stored manifest entry (short keys: manifests of 10,000+ files are read whole when freezing). */
export interface ManifestEntry { p: string; k: 'f' | 'o' | 'i' | 'd'; h: string | null; s: number; m: number; b: boolean; t: number | null; n: number | null }
export interface Manifest {
  files: ManifestEntry[];
  unscanned: { p: string; d: string }[];
  /** Why the capture may have left out paths anywhere (absent: only where `unscanned` says). */
  partial?: string;
}

export interface SnapshotRow {
  id: string;
  sessionId: string;
  hostId: string | null;
  capturedAt: Date;
  fileCount: number;
  byteSize: number;
  prunedAt: Date | null;
}

export interface Policy {
  filePatchBytes: number;
  changesetPatchBytes: number;
  maxContentBytes: number;
  maxUploadBytes: number;
  maxManifestFiles: number;
  retainMs: number;
  retainExecutions: number;
  graceMs: number;
}

export async function readPolicy(db: Db): Promise<Policy> {
  const [p] = await db`SELECT * FROM changeset_policy`;
  return {
    filePatchBytes: Number(p.filePatchBytes), changesetPatchBytes: Number(p.changesetPatchBytes),
    maxContentBytes: Number(p.maxContentBytes), maxUploadBytes: Number(p.maxUploadBytes),
    maxManifestFiles: Number(p.maxManifestFiles), retainMs: Number(p.retainMs),
    retainExecutions: Number(p.retainExecutions), graceMs: Number(p.graceMs),
  };
}

/** Changes the policy (admin): limits and retention apply to every instance from the next operation. */
export async function setPolicy(db: Db, p: Partial<Policy>): Promise<Policy> {
  const col: Record<keyof Policy, string> = {
    filePatchBytes: 'file_patch_bytes', changesetPatchBytes: 'changeset_patch_bytes', maxContentBytes: 'max_content_bytes',
    maxUploadBytes: 'max_upload_bytes', maxManifestFiles: 'max_manifest_files', retainMs: 'retain_ms',
    retainExecutions: 'retain_executions', graceMs: 'grace_ms',
  };
  const set: Record<string, number> = {};
  for (const [k, v] of Object.entries(p)) {
    if (v === undefined || v === null) continue;
    if (!(k in col) || !Number.isSafeInteger(v) || (v as number) < 0) throw new InvalidRequestError(k, `${k} must be a non-negative integer.`);
    set[col[k as keyof Policy]] = v as number;
  }
  // One statement: all the given values change together, or none.
  if (Object.keys(set).length) await db`UPDATE changeset_policy SET ${db(set)}`;
  return readPolicy(db);
}

const HASH = /^[0-9a-f]{64}$/;

export function sha256(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A manifest path: relative, `/`-separated, no empty, `.` or `..` segment, no NUL. */
export function checkPath(p: unknown, field: string): string {
  if (typeof p !== 'string' || p.length === 0 || p.length > 4096) throw new InvalidRequestError(field, `${field} must be a non-empty relative path.`);
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) throw new InvalidRequestError(field, `${field} must be relative, not absolute: ${JSON.stringify(p)}.`);
  if (p.includes('\u0000')) throw new InvalidRequestError(field, `${field} must not contain NUL characters.`);
  if (p.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    throw new InvalidRequestError(field, `${field} must not contain empty, "." or ".." segments: ${JSON.stringify(p)}.`);
  }
  return p;
}

function checkHash(h: unknown, field: string): string {
  if (typeof h !== 'string' || !HASH.test(h)) throw new InvalidRequestError(field, `${field} must be a SHA-256 in lowercase hex.`);
  return h;
}

/**
 * The holder scope an upload by this actor records: its token's directory ('' for an unscoped token).
 * Contents are stored once, but that the gateway holds some bytes is itself information, so a scoped
 * caller only counts a content as held when a holder row lies within its scope (migration 051).
 */
function holderScope(actor: Actor): string {
  return actor.directory === null ? '' : actor.directory.length > 1 ? actor.directory.replace(/\/$/, '') : actor.directory;
}

/** Of these hashes (unique), the ones held for the actor, with their stored size. */
async function heldContents(db: Db, actor: Actor, hashes: string[]): Promise<Map<string, number>> {
  if (hashes.length === 0) return new Map();
  const rows = actor.directory === null
    ? await db<{ hash: string; size: number }[]>`SELECT hash, size FROM contents WHERE hash = ANY(${hashes})`
    : await db<{ hash: string; size: number }[]>`
        SELECT c.hash, c.size FROM contents c
        WHERE c.hash = ANY(${hashes})
          AND EXISTS (SELECT 1 FROM content_holders h WHERE h.hash = c.hash AND ${scopeCondition(db, actor, 'h.scope')})`;
  return new Map(rows.map((r) => [r.hash, Number(r.size)]));
}

/**
 * Which of these hashes the gateway does not hold for the caller (the host uploads only those): for a
 * directory-scoped token, a content only another directory uploaded reads as missing, so no host learns
 * what other directories hold. A read: it changes nothing. A content it reports as held may still be
 * pruned (unreferenced past the grace period) before the host's createSnapshot names it; createSnapshot
 * then answers ContentMissingError with its hash and the host uploads it and tries again
 * (host/snapshot-upload.ts).
 */
export async function missingContents(db: Db, actor: Actor, hashes: string[]): Promise<string[]> {
  if (hashes.length > 100_000) throw new InvalidRequestError('hashes', 'At most 100000 hashes per request.');
  hashes.forEach((h, i) => checkHash(h, `hashes[${i}]`));
  const unique = [...new Set(hashes)];
  const have = await heldContents(db, actor, unique);
  return unique.filter((h) => !have.has(h));
}

export interface ContentInput { hash: string; base64: string }

/**
 * Stores contents by hash. The whole batch is checked first (hash shape, strict base64, size limits,
 * SHA-256 of the bytes equals the claimed hash): one bad item and nothing is stored.
 */
export async function uploadContents(sql: Sql, actor: Actor, input: { contents: ContentInput[] }): Promise<{ stored: number; alreadyPresent: number }> {
  const policy = await readPolicy(sql);
  const rows: { hash: string; size: number; data: Buffer }[] = [];
  let total = 0;
  const seen = new Set<string>();
  input.contents.forEach((c, i) => {
    const field = `contents[${i}]`;
    const hash = checkHash(c.hash, `${field}.hash`);
    if (typeof c.base64 !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(c.base64) || c.base64.length % 4 !== 0) {
      throw new InvalidRequestError(`${field}.base64`, `${field}.base64 is not valid base64.`);
    }
    if (c.base64.length / 4 * 3 > policy.maxContentBytes + 3) {
      throw new InvalidRequestError(`${field}.base64`, `${field} is larger than the content limit of ${policy.maxContentBytes} bytes.`);
    }
    const data = Buffer.from(c.base64, 'base64');
    if (data.length > policy.maxContentBytes) {
      throw new InvalidRequestError(`${field}.base64`, `${field} is larger than the content limit of ${policy.maxContentBytes} bytes.`);
    }
    total += data.length;
    if (total > policy.maxUploadBytes) throw new InvalidRequestError('contents', `The upload is larger than ${policy.maxUploadBytes} bytes: split it.`);
    if (sha256(data) !== hash) throw new InvalidRequestError(`${field}.hash`, `${field}: the SHA-256 of the content does not match its hash.`);
    if (seen.has(hash)) return;
    seen.add(hash);
    rows.push({ hash, size: data.length, data });
  });
  if (rows.length === 0) return { stored: 0, alreadyPresent: 0 };
  return sql.begin(async (tx) => {
    await contentLockShared(tx);
    // Hosts racing to upload the same content (their first captures of one repository) take turns per
    // content: the later ones find it stored instead of writing a second 1 MB copy that the unique
    // index then throws away (a speculative insert leaves its TOAST behind as dead space). Locks are
    // taken in key order, so two overlapping batches cannot deadlock.
    // (Advisory locks hold on the node that takes them: every gateway connection goes to the Citus
    // coordinator on a cluster, docs/citus.md, so all instances take them there.)
    const keys = [...new Set(rows.map((r) => contentLockKey(r.hash)))].sort((a, b) => a - b);
    for (const k of keys) await tx`SELECT pg_advisory_xact_lock(${CONTENT_UPLOAD_LOCK}, ${k})`;
    // The transaction's time as a parameter, not now() in the upsert: on a cluster, contents are
    // distributed by hash and an INSERT … ON CONFLICT DO UPDATE there must not evaluate functions on the shard.
    const [{ now }] = await tx<{ now: string }[]>`SELECT now()::text AS now`;
    // What counts as already present is what was held for the caller, not what the gateway holds.
    const held = await heldContents(tx, actor, rows.map((r) => r.hash));
    const scope = holderScope(actor);
    for (const r of rows) {
      await tx`
        INSERT INTO contents (hash, size, data) VALUES (${r.hash}, ${r.size}, ${r.data})
        ON CONFLICT (hash) DO UPDATE SET touched_at = ${now}::timestamptz`;
      await tx`INSERT INTO content_holders (hash, scope) VALUES (${r.hash}, ${scope}) ON CONFLICT DO NOTHING`;
    }
    return { stored: rows.length - held.size, alreadyPresent: held.size };
  });
}

/** Validates manifest entries as sent into their stored form (field names `files[i].…`). */
function normalizeEntries(input: CreateSnapshotInput, maxFiles: number): ManifestEntry[] {
  if (!Array.isArray(input.files)) throw new InvalidRequestError('files', 'files must be a list.');
  if (input.files.length > maxFiles) throw new InvalidRequestError('files', `A manifest holds at most ${maxFiles} entries.`);
  const files: ManifestEntry[] = [];
  const paths = new Set<string>();
  input.files.forEach((f, i) => {
    const field = `files[${i}]`;
    const p = checkPath(f.path, `${field}.path`);
    if (paths.has(p)) throw new InvalidRequestError(`${field}.path`, `Duplicate path in the manifest: ${JSON.stringify(p)}.`);
    paths.add(p);
    const k = KIND_CODE[f.kind];
    if (!k) throw new InvalidRequestError(`${field}.kind`, `${field}.kind is not a known entry kind.`);
    if (!Number.isSafeInteger(f.size) || f.size < 0) throw new InvalidRequestError(`${field}.size`, `${field}.size must be a non-negative integer.`);
    if (!Number.isInteger(f.mode) || f.mode < 0 || f.mode > 0o177777) throw new InvalidRequestError(`${field}.mode`, `${field}.mode is not a file mode.`);
    const needsHash = k === 'f' || k === 'o' || k === 'd';
    const h = needsHash || f.hash != null ? checkHash(f.hash, `${field}.hash`) : null;
    const t = f.mtimeMs == null ? null : Number(f.mtimeMs);
    if (t !== null && !Number.isFinite(t)) throw new InvalidRequestError(`${field}.mtimeMs`, `${field}.mtimeMs must be a number.`);
    if (k === 'i' && h === null && t === null) {
      throw new InvalidRequestError(`${field}.mtimeMs`, `${field}: an ignored entry needs its hash or its modification time.`);
    }
    files.push({ p, k: k as ManifestEntry['k'], h, s: f.size, m: f.mode, b: !!f.binary, t, n: f.count ?? null });
  });
  return files;
}

/** `unscanned` and `partial` as stored (never inherited from a base: they describe this capture). */
function normalizeExtent(input: CreateSnapshotInput): Pick<Manifest, 'unscanned' | 'partial'> {
  const unscanned = (input.unscanned ?? []).map((u, i) => {
    const p = checkPath(u.path, `unscanned[${i}].path`);
    const d = typeof u.detail === 'string' ? u.detail.slice(0, 2000) : '';
    return { p, d };
  });
  if (input.partial == null) return { unscanned };
  if (typeof input.partial !== 'string' || input.partial.trim() === '') {
    throw new InvalidRequestError('partial', 'partial must say why the capture may be incomplete (a non-empty string), or be left out.');
  }
  return { unscanned, partial: checkText(input.partial, 'partial', 2_000) };
}

/**
 * The checks of a whole manifest (entry count, no entry below another) and its stored form: sorted
 * by path, with the counts of the Snapshot row. `files` has unique paths.
 */
function completeManifest(files: ManifestEntry[], extent: Pick<Manifest, 'unscanned' | 'partial'>, maxFiles: number):
  { manifest: Manifest; fileCount: number; byteSize: number } {
  if (files.length > maxFiles) throw new InvalidRequestError('files', `A manifest holds at most ${maxFiles} entries.`);
  const paths = new Set(files.map((e) => e.p));
  let fileCount = 0;
  let byteSize = 0;
  // No entry may sit below another entry (a file is not a directory; an ignored directory is opaque).
  for (const e of files) {
    if (e.k === 'f' || e.k === 'o') { fileCount++; byteSize += e.s; }
    let i = e.p.lastIndexOf('/');
    while (i > 0) {
      const parent = e.p.slice(0, i);
      if (paths.has(parent)) throw new InvalidRequestError('files', `${JSON.stringify(e.p)} lies below the entry ${JSON.stringify(parent)}.`);
      i = parent.lastIndexOf('/');
    }
  }
  files.sort((a, b) => (a.p < b.p ? -1 : a.p > b.p ? 1 : 0));
  const manifest: Manifest = extent.partial === undefined ? { files, unscanned: extent.unscanned } : { files, unscanned: extent.unscanned, partial: extent.partial };
  return { manifest, fileCount, byteSize };
}

/** Validates a (full) manifest into its stored form; throws InvalidRequestError naming the first bad field. */
export function normalizeManifest(input: CreateSnapshotInput, maxFiles: number): { manifest: Manifest; fileCount: number; byteSize: number } {
  const files = normalizeEntries(input, maxFiles);
  return completeManifest(files, normalizeExtent(input), maxFiles);
}

/** The paths of a delta's `removed`, checked on their own (shape, no repeat, not also in `files`). */
function normalizeRemoved(input: CreateSnapshotInput, sent: ManifestEntry[], maxFiles: number): string[] {
  const removed = input.removed ?? [];
  if (!Array.isArray(removed)) throw new InvalidRequestError('removed', 'removed must be a list of paths.');
  if (removed.length > maxFiles) throw new InvalidRequestError('removed', `A manifest holds at most ${maxFiles} entries: removed lists more.`);
  const given = new Set(sent.map((e) => e.p));
  const seen = new Set<string>();
  return removed.map((r, i) => {
    const field = `removed[${i}]`;
    const p = checkPath(r, field);
    if (seen.has(p)) throw new InvalidRequestError(field, `${field} repeats the path ${JSON.stringify(p)}.`);
    seen.add(p);
    if (given.has(p)) throw new InvalidRequestError(field, `${field}: ${JSON.stringify(p)} is also in files (a changed entry is sent in files only).`);
    return p;
  });
}

/**
 * The complete manifest of a delta: the base's entries minus `removed`, with `sent` added or
 * replacing the entry at the same path, then the checks of a whole manifest.
 */
export function composeManifest(base: Manifest, sent: ManifestEntry[], removed: string[], extent: Pick<Manifest, 'unscanned' | 'partial'>, maxFiles: number):
  { manifest: Manifest; fileCount: number; byteSize: number } {
  const byPath = new Map(base.files.map((e) => [e.p, e]));
  removed.forEach((p, i) => {
    if (!byPath.delete(p)) throw new InvalidRequestError(`removed[${i}]`, `removed[${i}]: the base snapshot has no entry at ${JSON.stringify(p)}.`);
  });
  for (const e of sent) byPath.set(e.p, e);
  return completeManifest([...byPath.values()], extent, maxFiles);
}

/**
 * Stores a manifest as a snapshot of the session's worktree, sent whole or as a delta against `base`
 * (see the module comment). Every stored file's content that the request sends must already be held
 * with the same size (ContentMissingError lists the ones that are not); the entries a delta inherits
 * were checked when its base was stored and are held while the base is not pruned. Nothing is stored
 * when any check fails.
 */
export async function createSnapshot(sql: Sql, actor: Actor, input: CreateSnapshotInput): Promise<SnapshotRow> {
  const sessionID = requireId('session', input.sessionID, 'sessionID');
  const hostID = input.hostID == null ? null : requireId('host', input.hostID, 'hostID');
  const baseID = input.base == null ? null : requireId('snapshot', input.base, 'base');
  if (baseID === null && input.removed != null) {
    throw new InvalidRequestError('removed', 'removed lists paths of a base snapshot: it is allowed only with base.');
  }
  const policy = await readPolicy(sql);
  // Everything that does not need the base is checked before the transaction.
  const sent = normalizeEntries(input, policy.maxManifestFiles);
  const extent = normalizeExtent(input);
  const removed = baseID === null ? [] : normalizeRemoved(input, sent, policy.maxManifestFiles);
  const full = baseID === null ? completeManifest(sent, extent, policy.maxManifestFiles) : null;
  return sql.begin(async (tx) => {
    const s = await getSession(tx, actor, sessionID);
    if (!s) throw new SessionNotFoundError(sessionID);
    if (hostID) await requireHost(tx, actor, hostID, { live: false });
    // Before the base is read: the retention sweep (exclusive) cannot prune it or delete its
    // contents until this transaction ends.
    await contentLockShared(tx);
    let composed = full;
    if (baseID !== null) {
      // A base of this session only: read on its shard, by key.
      const [b] = await tx<{ sessionId: string; prunedAt: Date | null; manifest: Manifest | null }[]>`
        SELECT session_id, pruned_at, manifest FROM snapshots WHERE session_id = ${sessionID} AND id = ${baseID}`;
      if (!b || b.sessionId !== sessionID) throw new InvalidRequestError('base', `base ${baseID} is not a snapshot of session ${sessionID} (or it was pruned unused).`);
      if (b.prunedAt || !b.manifest) throw new InvalidRequestError('base', `base ${baseID} has expired: send the whole manifest.`);
      composed = composeManifest(b.manifest, sent, removed, extent, policy.maxManifestFiles);
    }
    const { manifest, fileCount, byteSize } = composed!;
    // Contents: those of the entries sent (a full manifest: all of them).
    const wanted = new Map<string, number>();
    for (const e of sent) if (e.k === 'f') wanted.set(e.h!, e.s);
    const hashes = [...wanted.keys()];
    // Held for the caller (a scoped host names only what its directory uploaded): otherwise success
    // against ContentMissingError would tell it what another directory holds.
    const sizes = await heldContents(tx, actor, hashes);
    const missing = hashes.filter((h) => !sizes.has(h));
    if (missing.length) throw new ContentMissingError(missing.slice(0, 1000), sessionID);
    for (const [h, size] of wanted) {
      if (sizes.get(h) !== size) throw new InvalidRequestError('files', `The size given for content ${h} is not its stored size.`);
    }
    const [row] = await tx<SnapshotRow[]>`
      INSERT INTO snapshots (id, session_id, host_id, file_count, byte_size, manifest)
      VALUES (${newId('snapshot', sessionID)}, ${sessionID}, ${hostID}, ${fileCount}, ${byteSize}, ${tx.json(manifest as any)})
      RETURNING id, session_id, host_id, captured_at, file_count, byte_size, pruned_at`;
    return row;
  });
}

/**
 * Checks, inside a boundary's transaction, that a snapshot can be one of this session's boundaries:
 * it exists, belongs to the session and has not been pruned. Takes the content lock (shared).
 */
export async function requireBoundarySnapshot(tx: Tx, snapshotID: unknown, sessionID: string, field: string): Promise<string> {
  const id = requireId('snapshot', snapshotID, field);
  await contentLockShared(tx);
  // A snapshot of this session only: read by key, on its shard (whatever the shape of its ID).
  const [s] = await tx`SELECT session_id, pruned_at FROM snapshots WHERE session_id = ${sessionID} AND id = ${id}`;
  if (!s || s.sessionId !== sessionID) throw new InvalidRequestError(field, `${field} ${id} is not a snapshot of session ${sessionID} (or it was pruned unused).`);
  if (s.prunedAt) throw new InvalidRequestError(field, `${field} ${id} has expired.`);
  return id;
}

export async function loadManifest(db: Db, snapshotID: string): Promise<Manifest | null> {
  const [s] = await db`SELECT manifest FROM snapshots WHERE ${rowKey(db, snapshotID)}`;
  return (s?.manifest as Manifest) ?? null;
}
