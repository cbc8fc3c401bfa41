// Uploads a snapshot tree to the gateway through the host protocol of the changeset issue:
// missingContents -> uploadContents (batches) -> createSnapshot. A session's next manifest is sent as
// a delta against the last snapshot this sink created for it (`base`, the changed entries, the removed
// paths): consecutive OpenCode steps share most of their tree (step N's end is step N+1's start), so a
// delta is a few entries instead of the whole worktree. A refused base (pruned) falls back to a whole
// manifest.
import { GatewayError, type Gateway } from './gateway.js';
import type { SnapshotSink } from './bridge.js';
import type { TreeManifest } from './snapshot.js';
import { type SnapshotEntryKind, CreateSnapshotDocument, MissingContentsDocument, UploadContentsDocument } from '../../client/index.js';

const BATCH_BYTES = 8 * 1024 * 1024;
/** Sessions whose last manifest is remembered (least recently used dropped first). */
const MAX_BASES = 64;

interface EntryInput {
  path: string; kind: SnapshotEntryKind; hash: string | null; size: number; mode: number; binary: boolean | null; mtimeMs: number | null; count: number | null;
}

export class GraphqlSnapshotSink implements SnapshotSink {
  /** Per session: the last snapshot created and its entries (as sent) by path. */
  private last = new Map<string, { id: string; entries: Map<string, string> }>();
  /** Counters (tests and logs): whole manifests and deltas sent. */
  readonly stats = { whole: 0, deltas: 0 };

  constructor(private readonly gw: Gateway) {}

  async upload(sessionID: string, hostID: string, m: TreeManifest): Promise<string | null> {
    const files: EntryInput[] = m.files.map((f) => ({
      path: f.path, kind: f.kind as SnapshotEntryKind, hash: f.hash ?? null, size: f.size, mode: f.mode, binary: f.binary ?? null,
      mtimeMs: f.mtimeMs ?? null, count: f.count ?? null,
    }));
    const keyed = new Map(files.map((f) => [f.path, JSON.stringify(f)]));
    const prev = this.last.get(sessionID);
    let delta = prev ? {
      base: prev.id,
      files: files.filter((f) => prev.entries.get(f.path) !== keyed.get(f.path)),
      removed: [...prev.entries.keys()].filter((p) => !keyed.has(p)),
    } : null;
    // Contents of entries a delta inherits are held by the gateway while its base is not pruned.
    await this.uploadMissing(m, delta ? delta.files : files);
    const extent = { unscanned: m.unscanned, ...(m.partial ? { partial: m.partial } : {}) };
    let s;
    try {
      s = await this.gw.call(CreateSnapshotDocument, { input: delta ? { sessionID, hostID, ...extent, ...delta } : { sessionID, hostID, ...extent, files } });
    } catch (e) {
      const field = e instanceof GatewayError ? String(e.fields.field ?? '') : '';
      if (!delta || !(field === 'base' || field.startsWith('removed'))) throw e;
      // The base is gone (pruned with its changeset, or its session removed): send the manifest whole.
      this.last.delete(sessionID);
      delta = null;
      await this.uploadMissing(m, files);
      s = await this.gw.call(CreateSnapshotDocument, { input: { sessionID, hostID, ...extent, files } });
    }
    if (delta) this.stats.deltas++;
    else this.stats.whole++;
    this.last.delete(sessionID);
    this.last.set(sessionID, { id: s.id, entries: keyed });
    if (this.last.size > MAX_BASES) this.last.delete(this.last.keys().next().value!);
    return s.id;
  }

  /** Uploads the contents of these entries that the gateway does not hold. */
  private async uploadMissing(m: TreeManifest, entries: EntryInput[]) {
    const hashes = [...new Set(entries.filter((f) => f.hash && m.contents.has(f.hash)).map((f) => f.hash!))];
    let missing: string[] = [];
    for (let i = 0; i < hashes.length; i += 10_000) {
      const r = await this.gw.call(MissingContentsDocument, { hashes: hashes.slice(i, i + 10_000) });
      missing = missing.concat(r.hashes);
    }
    let batch: { hash: string; base64: string }[] = [];
    let bytes = 0;
    const send = async () => {
      if (!batch.length) return;
      await this.gw.call(UploadContentsDocument, { input: { contents: batch } });
      batch = [];
      bytes = 0;
    };
    for (const h of missing) {
      const data = m.contents.get(h)!;
      if (bytes + data.length > BATCH_BYTES) await send();
      batch.push({ hash: h, base64: Buffer.from(data).toString('base64') });
      bytes += data.length;
    }
    await send();
  }
}
