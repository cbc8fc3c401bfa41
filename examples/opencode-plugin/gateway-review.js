// gateway-review: an example OpenCode plugin built on the typed client (@agent-history/client).
// Plain ESM, runs in OpenCode's Bun runtime and in Node 20+.
//
// On each settled execution (the gateway's `executionSettled` subscription, resumed from its last
// cursor after a reconnect) it reads the execution's frozen changeset and its continuity, and logs
// them through OpenCode's app log. When the execution belongs to a worker session (a child session,
// e.g. one a `task` subagent ran in) and succeeded, it seals that session: nothing more can start in
// it, and the gateway answers SessionSealed only once nothing of it can still run.
//
// Install: `npm run build` in the gateway's repository (builds client/dist), then in the project
// whose OpenCode should load the plugin: `bun add file:/path/to/gateway/client` (or npm install), and
// copy this file to `.opencode/plugin/` (or list it in opencode.json: "plugin": ["file:///…/gateway-review.js"]).
// Configure with GATEWAY_URL (default http://127.0.0.1:4000/graphql) and GATEWAY_TOKEN (a plugin or admin
// token); GATEWAY_SEAL_WORKERS=0 turns sealing off.
import {
  ContinuityDocument,
  ExecutionChangesetDocument,
  ExecutionSettledDocument,
  GatewayCallError,
  GatewayClient,
  SealSessionDocument,
  SessionSummaryDocument,
} from '@agent-history/client';

/**
 * The plugin's work, independent of OpenCode (tests drive it directly): subscribes, and for each
 * settlement calls `onReview({ settlement, changeset, continuity, sealed })`. Returns a stop function.
 * @param {GatewayClient} gw
 * @param {{ sealWorkers?: boolean, after?: string | null, onReview?: (r: any) => void, onError?: (e: unknown) => void }} [opts]
 */
export function reviewSettlements(gw, opts = {}) {
  const sealWorkers = opts.sealWorkers ?? true;
  let chain = Promise.resolve();
  const review = async (settlement) => {
    const { execution } = await gw.request(ExecutionChangesetDocument, { id: settlement.executionID });
    const { continuity } = await gw.request(ContinuityDocument, { executionID: settlement.executionID });
    let sealed = null;
    if (sealWorkers && settlement.status === 'SUCCEEDED') {
      const { session } = await gw.request(SessionSummaryDocument, { id: settlement.sessionID });
      if (session?.parentID && session.status !== 'SEALED') {
        try {
          sealed = await gw.call(SealSessionDocument, { input: { sessionID: settlement.sessionID, timeoutMs: 30_000 } });
        } catch (e) {
          // Typed refusals arrive as { _tag, ... }: e.g. SealTimeoutError (call again) or SealUnsupportedError.
          if (e instanceof GatewayCallError) sealed = e.error;
          else throw e;
        }
      }
    }
    opts.onReview?.({ settlement, changeset: execution?.changeset ?? null, continuity, sealed });
  };
  return gw.subscribe(ExecutionSettledDocument, { after: opts.after ?? null }, {
    // One settlement at a time, in the log's order.
    next: (data) => { chain = chain.then(() => review(data.executionSettled)).catch((e) => opts.onError?.(e)); },
    error: (e) => opts.onError?.(e),
  });
}

/** The OpenCode plugin. */
export const GatewayReview = async ({ client }) => {
  const token = process.env.GATEWAY_TOKEN;
  if (!token) return {};
  const gw = new GatewayClient({ url: process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql', token });
  const log = (level, message, extra) =>
    client?.app?.log?.({ body: { service: 'gateway-review', level, message, extra } }).catch?.(() => {});
  reviewSettlements(gw, {
    sealWorkers: process.env.GATEWAY_SEAL_WORKERS !== '0',
    onReview: ({ settlement, changeset, continuity, sealed }) => {
      const cov = changeset?.coverage?.__typename ?? 'no changeset';
      log('info', `execution ${settlement.executionID} ${settlement.status}: ${changeset?.fileCount ?? 0} files (${cov}), continuity ${continuity.__typename}`
        + (sealed ? `; worker session ${settlement.sessionID}: ${sealed.__typename ?? sealed._tag}` : ''),
        { files: changeset?.files?.map((f) => `${f.status} ${f.path}`) });
    },
    onError: (e) => log('error', `gateway-review: ${e instanceof Error ? e.message : JSON.stringify(e)}`),
  });
  return {};
};
