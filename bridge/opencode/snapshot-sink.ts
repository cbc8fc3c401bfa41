// Uploads an OpenCode step's manifest to the gateway with the hosts' one upload protocol
// (host/snapshot-upload.ts: missing contents, 8 MiB batches, a delta against the session's previous
// snapshot, whole when the base is refused). Consecutive OpenCode steps share most of their tree (step
// N's end is step N+1's start), so a delta is a few entries instead of the whole worktree.
import { SnapshotUploader, type SnapshotTransport } from '../../host/snapshot-upload.js';
import { bridgeTransport, type Gateway } from './gateway.js';
import type { SnapshotSink } from './context.js';
import type { TreeManifest } from './snapshot.js';

export class GraphqlSnapshotSink implements SnapshotSink {
  private readonly uploader = new SnapshotUploader({ retry: (f) => f() }); // the transport retries itself
  private readonly transport: SnapshotTransport;
  /** Counters (tests and logs): whole manifests and deltas sent. */
  get stats() { return this.uploader.stats; }

  /** `gw`: the bridge's gateway connection, or any client with `GatewayClient.call`'s contract. */
  constructor(gw: Pick<Gateway, 'call'> | SnapshotTransport) {
    this.transport = gw instanceof Object && 'request' in gw ? bridgeTransport(gw as Pick<Gateway, 'call'>) : (gw as SnapshotTransport);
  }

  async upload(sessionID: string, hostID: string, m: TreeManifest): Promise<string | null> {
    const files = m.files.map((f) => ({
      path: f.path, kind: f.kind, hash: f.hash ?? null, size: f.size, mode: f.mode, binary: f.binary ?? null,
      mtimeMs: f.mtimeMs ?? null, count: f.count ?? null,
    }));
    const s = await this.uploader.upload(this.transport, { sessionID, hostID, files, unscanned: m.unscanned, partial: m.partial ?? null, content: (h) => m.content(h) });
    return s.id;
  }
}
