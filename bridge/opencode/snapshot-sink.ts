// Uploads an OpenCode step's manifest to the gateway with the hosts' one upload protocol
// (host/snapshot-upload.ts: missing contents, 8 MiB batches, a delta against the session's previous
// snapshot, whole when the base is refused). Consecutive OpenCode steps share most of their tree (step
// N's end is step N+1's start), so a delta is a few entries instead of the whole worktree.
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { GatewayCallError } from '../../client/index.js';
import { SnapshotUploader, type SnapshotTransport } from '../../host/snapshot-upload.js';
import { GatewayError, type Gateway } from './gateway.js';
import type { SnapshotSink } from './context.js';
import type { TreeManifest } from './snapshot.js';

/**
 * The typed documents over the bridge's gateway connection (which retries across gateway restarts):
 * the success member of the result union, or a thrown GatewayCallError as `GatewayClient.call` does.
 */
export function bridgeTransport(gw: Pick<Gateway, 'call'>): SnapshotTransport {
  return {
    async call<TData, TVars extends Record<string, unknown>>(doc: TypedDocumentNode<TData, TVars>, variables?: TVars) {
      try {
        return await gw.call(doc, (variables ?? {}) as TVars);
      } catch (e) {
        if (e instanceof GatewayError) throw new GatewayCallError({ _tag: e.tag, message: String(e.fields.message ?? ''), code: Number(e.fields.code ?? 0), ...e.fields });
        throw e;
      }
    },
  };
}

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
