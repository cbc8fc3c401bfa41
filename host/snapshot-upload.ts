import { createHash } from 'node:crypto';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { GatewayCallError, GatewayConnectionError } from '../client/index.js';
import { CreateSnapshotDocument, MissingContentsDocument, UploadContentsDocument, type SnapshotFileInput, type UnscannedInput } from '../client/generated.js';

/**
 * The snapshot upload protocol of every host (the reference host's worktree capture, `host/capture.ts`,
 * and the OpenCode bridge, `bridge/opencode/snapshot-sink.ts`), written once:
 *
 * 1. `missingContents` for the stored contents of the entries being sent that the gateway is not known
 *    to hold (asked in pages of 20,000 hashes);
 * 2. `uploadContents` of those, in batches of at most 8 MiB (each content's SHA-256 checked first: a
 *    file that changed since it was captured is an error, never a wrong upload);
 * 3. `createSnapshot`, as a delta against the last snapshot this uploader created for the session
 *    (`base`, the entries added or changed, the paths `removed`), or whole when there is none;
 *    a `ContentMissingError` (content pruned meanwhile) uploads what it names and tries again; a base
 *    the gateway refuses (pruned with its changeset, its session removed) falls back to the whole
 *    manifest. The gateway stores complete manifests either way.
 */

/** What the uploader needs of a gateway client: `GatewayClient.call` (a result union's success member, or a thrown GatewayCallError). */
export interface SnapshotTransport {
  call<TData, TVars extends Record<string, unknown>>(doc: TypedDocumentNode<TData, TVars>, variables?: TVars): Promise<any>;
}

export interface SnapshotRequest {
  sessionID: string;
  hostID?: string | null;
  /** The whole manifest of this capture. */
  files: SnapshotFileInput[];
  unscanned: UnscannedInput[];
  /** Why the capture may have left out paths anywhere (see `CreateSnapshotInput.partial`). */
  partial?: string | null;
  /** The bytes of a stored (FILE) entry's content by SHA-256; null when the capture has none. */
  content(hash: string): Uint8Array | null | Promise<Uint8Array | null>;
}

/** What a delta sent: its base, the entries added or changed, the paths removed. */
export interface SnapshotDelta { base: string; files: number; removed: number }

export interface SnapshotUploaded { id: string; fileCount: number; byteSize: number; uploaded: number; uploadedBytes: number; delta: SnapshotDelta | null }

export interface UploaderOptions {
  /** Send manifests as deltas against the session's last snapshot made by this uploader. Default true. */
  deltas?: boolean;
  /** Wraps every gateway call (default: `retrying`, for network resets before any answer). */
  retry?: <T>(f: () => Promise<T>) => Promise<T>;
  batchBytes?: number;
}

const BATCH_BYTES = 8 * 1024 * 1024;
const ASK_PAGE = 20_000;
/** Sessions whose last snapshot an uploader remembers (least recently used forgotten first). */
const MAX_BASES = 64;

/** Whether two entries are stored alike (the gateway's stored form: absent hash, mtime, count are null). */
export function sameEntry(a: SnapshotFileInput, b: SnapshotFileInput): boolean {
  return a.kind === b.kind && (a.hash ?? null) === (b.hash ?? null) && a.size === b.size && a.mode === b.mode &&
    !!a.binary === !!b.binary && (a.mtimeMs ?? null) === (b.mtimeMs ?? null) && (a.count ?? null) === (b.count ?? null);
}

/**
 * Retries a request that failed on the network before any answer (a keep-alive socket reset by the
 * server as it was reused, e.g. after a long synchronous walk). Every request of the protocol is safe
 * to repeat: queries, idempotent uploads, and snapshot creation (a repeat only makes an unused snapshot).
 */
export async function retrying<T>(f: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await f();
    } catch (e: any) {
      // fetch's TypeError, as the typed client reports it (GatewayConnectionError, with it as `cause`) or bare.
      const failure = e instanceof GatewayConnectionError ? e.cause as any : e;
      const code = failure?.cause?.code ?? failure?.code;
      if (attempt >= 3 || !(failure instanceof TypeError) || !['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNREFUSED'].includes(code)) throw e;
      await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
    }
  }
}

export class SnapshotUploader {
  /** Hashes the gateway confirmed holding. */
  private known = new Set<string>();
  /** Per session: the last snapshot created and its entries by path (the next delta's base). */
  private last = new Map<string, { id: string; entries: Map<string, SnapshotFileInput> }>();
  /** Counters (tests and logs): whole manifests and deltas sent. */
  readonly stats = { whole: 0, deltas: 0 };
  private readonly deltas: boolean;
  private readonly retry: <T>(f: () => Promise<T>) => Promise<T>;
  private readonly batchBytes: number;

  constructor(opts: UploaderOptions = {}) {
    this.deltas = opts.deltas ?? true;
    this.retry = opts.retry ?? retrying;
    this.batchBytes = opts.batchBytes ?? BATCH_BYTES;
  }

  /** Forget what the gateway is known to hold (after it reports a content missing). */
  forgetKnown(): void { this.known.clear(); }

  /** Forget the session's last snapshot: its next manifest is sent whole. */
  forgetBase(sessionID: string): void { this.last.delete(sessionID); }

  /** The manifest part of createSnapshot's input: a delta against the session's last snapshot, or whole. */
  private manifestInput(req: SnapshotRequest): { files: SnapshotFileInput[]; base?: string; removed?: string[]; delta: SnapshotDelta | null } {
    const prev = this.deltas ? this.last.get(req.sessionID) : undefined;
    if (!prev) return { files: req.files, delta: null };
    const files = req.files.filter((f) => { const b = prev.entries.get(f.path); return !b || !sameEntry(b, f); });
    const now = new Set(req.files.map((f) => f.path));
    const removed = [...prev.entries.keys()].filter((p) => !now.has(p));
    return { files, base: prev.id, removed, delta: { base: prev.id, files: files.length, removed: removed.length } };
  }

  async upload(t: SnapshotTransport, req: SnapshotRequest): Promise<SnapshotUploaded> {
    let uploaded = 0;
    let uploadedBytes = 0;
    const send = async (hashes: string[]) => {
      let batch: { hash: string; base64: string }[] = [];
      let bytes = 0;
      const flush = async () => {
        if (!batch.length) return;
        const contents = batch;
        await this.retry(() => t.call(UploadContentsDocument, { input: { contents } }));
        batch = [];
        bytes = 0;
      };
      for (const h of hashes) {
        const data = await req.content(h);
        if (!data) throw new Error(`snapshot upload: the capture has no content ${h}`);
        if (createHash('sha256').update(data).digest('hex') !== h) {
          throw new Error(`snapshot upload: content ${h} changed while it was being captured; capture again`);
        }
        if (bytes + data.length > this.batchBytes) await flush();
        batch.push({ hash: h, base64: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64') });
        bytes += data.length;
        uploaded++;
        uploadedBytes += data.length;
      }
      await flush();
      for (const h of hashes) this.known.add(h);
    };
    const ask = async (hashes: string[]) => {
      const missing: string[] = [];
      for (let i = 0; i < hashes.length; i += ASK_PAGE) {
        const r = await this.retry(() => t.call(MissingContentsDocument, { hashes: hashes.slice(i, i + ASK_PAGE) }));
        missing.push(...r.hashes);
      }
      const m = new Set(missing);
      for (const h of hashes) if (!m.has(h)) this.known.add(h);
      return missing;
    };
    /** Contents of the entries sent that the gateway is not known to hold (a delta's other entries are its base's). */
    const stored = (files: SnapshotFileInput[]) => [...new Set(files.filter((f) => f.kind === 'FILE' && f.hash).map((f) => f.hash!))].filter((h) => !this.known.has(h));
    let m = this.manifestInput(req);
    let unknown = stored(m.files);
    if (unknown.length) await send(await ask(unknown));
    const extent = { unscanned: req.unscanned, ...(req.partial ? { partial: req.partial } : {}) };
    for (let attempt = 0; ; attempt++) {
      try {
        const { delta, ...manifest } = m;
        const s = await this.retry(() => t.call(CreateSnapshotDocument, { input: { sessionID: req.sessionID, hostID: req.hostID ?? null, ...manifest, ...extent } }));
        if (delta) this.stats.deltas++;
        else this.stats.whole++;
        if (this.deltas) {
          this.last.delete(req.sessionID);
          this.last.set(req.sessionID, { id: s.id, entries: new Map(req.files.map((f) => [f.path, f])) });
          if (this.last.size > MAX_BASES) this.last.delete(this.last.keys().next().value!);
        }
        return { id: s.id, fileCount: s.fileCount, byteSize: s.byteSize, uploaded, uploadedBytes, delta };
      } catch (e) {
        if (attempt < 20 && e instanceof GatewayCallError && e.error._tag === 'ContentMissingError') {
          const hashes = e.error.hashes as string[];
          for (const h of hashes) this.known.delete(h);
          await send(hashes);
          continue;
        }
        // The base was refused (pruned, removed, or not what this uploader remembers): send it whole.
        const field = e instanceof GatewayCallError && e.error._tag === 'InvalidRequestError' ? String(e.error.field ?? '') : '';
        if (m.delta && (field === 'base' || field.startsWith('removed'))) {
          this.forgetBase(req.sessionID);
          m = { files: req.files, delta: null };
          unknown = stored(m.files);
          if (unknown.length) await send(await ask(unknown));
          continue;
        }
        throw e;
      }
    }
  }
}
