// Uploads an OpenCode step's manifest to the gateway with the hosts' one upload protocol
// (host/snapshot-upload.ts: missing contents, 8 MiB batches, a delta against the session's previous
// snapshot, whole when the base is refused). Consecutive OpenCode steps share most of their tree (step
// N's end is step N+1's start), so a delta is a few entries instead of the whole worktree.
import { print } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { GatewayCallError } from '../../client/index.js';
import { SnapshotUploader, type SnapshotTransport } from '../../host/snapshot-upload.js';
import type { Gateway } from './gateway.js';
import type { SnapshotSink } from './bridge.js';
import type { TreeManifest } from './snapshot.js';

/**
 * The typed documents over the bridge's gateway connection (which retries across gateway restarts):
 * the success member of the result union, or a thrown GatewayCallError as `GatewayClient.call` does.
 */
export function bridgeTransport(gw: Pick<Gateway, 'request'>): SnapshotTransport {
  return {
    async call<TData, TVars extends Record<string, unknown>>(doc: TypedDocumentNode<TData, TVars>, variables?: TVars) {
      const data = await gw.request(print(doc), (variables ?? {}) as Record<string, unknown>);
      const [field, value] = (Object.entries(data ?? {})[0] ?? []) as [string, any];
      if (value?.__typename && /Error$/.test(value.__typename)) {
        const { __typename, ...rest } = value;
        throw new GatewayCallError({ _tag: __typename, ...rest });
      }
      // The crash tests' failpoint (see gateway.ts: BRIDGE_CRASH_AFTER=<mutation>), for the upload's mutations.
      if (process.env.BRIDGE_CRASH_AFTER && field === process.env.BRIDGE_CRASH_AFTER && isMutation(doc)) process.kill(process.pid, 'SIGKILL');
      return value;
    },
  };
}

const isMutation = (doc: TypedDocumentNode<any, any>) => doc.definitions.some((d) => d.kind === 'OperationDefinition' && d.operation === 'mutation');

export class GraphqlSnapshotSink implements SnapshotSink {
  private readonly uploader = new SnapshotUploader({ retry: (f) => f() }); // the transport retries itself
  private readonly transport: SnapshotTransport;
  /** Counters (tests and logs): whole manifests and deltas sent. */
  get stats() { return this.uploader.stats; }

  /** `gw`: the bridge's gateway connection, or any client with `GatewayClient.call`'s contract. */
  constructor(gw: Pick<Gateway, 'request'> | SnapshotTransport) {
    this.transport = 'request' in gw ? bridgeTransport(gw) : gw;
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
