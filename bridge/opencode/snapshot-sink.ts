// Uploads a snapshot tree to the gateway through the host protocol of the changeset issue:
// missingContents -> uploadContents (batches) -> createSnapshot.
import type { Gateway } from './gateway.js';
import type { SnapshotSink } from './bridge.js';
import type { TreeManifest } from './snapshot.js';

const BATCH_BYTES = 8 * 1024 * 1024;

export class GraphqlSnapshotSink implements SnapshotSink {
  constructor(private readonly gw: Gateway) {}

  async upload(sessionID: string, hostID: string, m: TreeManifest): Promise<string | null> {
    const hashes = [...m.contents.keys()];
    let missing: string[] = [];
    for (let i = 0; i < hashes.length; i += 10_000) {
      const d = await this.gw.request(
        'query($h: [String!]!) { r: missingContents(hashes: $h) { __typename ... on MissingContents { hashes } ... on Error { message } } }',
        { h: hashes.slice(i, i + 10_000) });
      if (!d.r?.hashes) throw new Error(`missingContents: ${d.r?.message ?? d.r?.__typename}`);
      missing = missing.concat(d.r.hashes);
    }
    let batch: { hash: string; base64: string }[] = [];
    let bytes = 0;
    const send = async () => {
      if (!batch.length) return;
      await this.gw.call('uploadContents', 'UploadContentsInput', '... on ContentsUploaded { stored }', { contents: batch });
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
    const s = await this.gw.call('createSnapshot', 'CreateSnapshotInput', '... on Snapshot { id }', {
      sessionID, hostID,
      files: m.files.map((f) => ({
        path: f.path, kind: f.kind, hash: f.hash ?? null, size: f.size, mode: f.mode, binary: f.binary ?? null,
        mtimeMs: f.mtimeMs ?? null, count: f.count ?? null,
      })),
      unscanned: m.unscanned,
      ...(m.partial ? { partial: m.partial } : {}),
    });
    return s.id;
  }
}
