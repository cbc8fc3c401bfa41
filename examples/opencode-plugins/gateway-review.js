// gateway-review: an OpenCode plugin that receives the frozen changeset of each execution of ITS OWN
// sessions as it settles (one OpenCode step = one gateway execution), through the typed client
// (@agent-history/client). Plain ESM for OpenCode's Bun runtime. See README.md: what must run (the gateway
// and the OpenCode bridge) and how the token is passed (GATEWAY_TOKEN in OpenCode's environment).
//
// OpenCode calls EVERY exported function of a plugin module as a plugin: this module exports only the
// plugin. Its helpers are module-private (copy them along when you adapt it).
import fs from 'node:fs';
import {
  ExecutionChangesetDocument,
  GatewayClient,
  LatestSettlementCursorDocument,
  SettledExecutionsDocument,
} from '@agent-history/client';

const SERVICE = 'gateway-review';

/** The plugin. `directory` is the project this OpenCode instance serves; `client` is OpenCode's own API. */
export const GatewayReview = async ({ client, directory }) => {
  const log = logger(client, SERVICE);
  const token = process.env.GATEWAY_TOKEN;
  if (!token) {
    await log('warn', 'GATEWAY_TOKEN is not set: the review plugin does nothing');
    return {};
  }
  const gw = new GatewayClient({ url: process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql', token });
  const owns = ownSessions(client, directory);

  await followSettlements(gw, log, async ({ executionID, status, execution }) => {
    if (!(await owns(execution.session))) return; // another OpenCode's, another directory's, or not OpenCode's at all
    const { execution: e } = await gw.request(ExecutionChangesetDocument, { id: executionID });
    const changeset = e?.changeset;
    if (!changeset) return;
    // Your review goes here. This example logs a summary line and, with GATEWAY_PLUGIN_LOG, writes the
    // whole changeset (files with their patches, coverage) as one JSON line.
    const files = changeset.files.map((f) => `${f.status} ${f.path} +${f.additions} -${f.deletions}`);
    await log('info', `execution ${executionID} (step ${execution.sequence} of ${execution.session.metadata.opencode.sessionID}) ${status}: `
      + `${changeset.fileCount} files, ${changeset.coverage.__typename}`, { files });
    report(SERVICE, {
      event: 'review', executionID, status, sequence: execution.sequence, sessionID: execution.session.id,
      opencodeSessionID: execution.session.metadata.opencode.sessionID, changeset,
    });
  });
  return {};
};

// ---- module-private helpers (not exported: OpenCode would call them as plugins) ----

/**
 * Whether a gateway session is one of this plugin's own: a session the bridge mirrored from OpenCode
 * (`metadata.opencode.sessionID`, set by the bridge, kept by every update) that THIS OpenCode knows
 * (asked through the plugin's own OpenCode client) in this plugin's project directory.
 */
function ownSessions(client, directory) {
  const known = new Map();
  return (session) => {
    const id = session?.metadata?.opencode?.sessionID;
    if (typeof id !== 'string') return Promise.resolve(false);
    if (!known.has(id)) {
      known.set(id, client.session.get({ path: { id } }).then(
        (r) => !!r.data && (r.data.directory === directory || r.data.directory.startsWith(`${directory}/`)),
        (e) => { known.delete(id); throw e; },
      ));
    }
    return known.get(id);
  };
}

/**
 * Subscribes to `executionSettled` from the settlement log's head (read first, so nothing settled after
 * the plugin loaded is missed; the client resumes from the last cursor after a reconnect) and calls
 * `onSettled` for one settlement at a time, in the log's order.
 */
async function followSettlements(gw, log, onSettled) {
  let after = null;
  // Waits a little for a gateway that is starting; past that the stream starts at "now" when it connects.
  for (let i = 0; i < 10 && after === null; i++) {
    try {
      after = (await gw.request(LatestSettlementCursorDocument, {})).latestSettlementCursor;
    } catch (e) {
      if (i === 9) await log('warn', `gateway not reachable (${e?.message ?? e}): following settlements from when it is`);
      else await new Promise((r) => setTimeout(r, 500));
    }
  }
  let chain = Promise.resolve();
  gw.subscribe(SettledExecutionsDocument, { after }, {
    next: (data) => {
      chain = chain.then(() => onSettled(data.executionSettled))
        .catch((e) => log('error', `while handling ${data.executionSettled.executionID}: ${e?.message ?? JSON.stringify(e)}`));
    },
    error: (e) => log('error', `subscription: ${e?.message ?? JSON.stringify(e)}`),
  });
}

/** Logs through OpenCode's app log (`service=<name>` in OpenCode's log). */
function logger(client, service) {
  return (level, message, extra) => client.app.log({ body: { service, level, message, extra } }).then(() => {}, () => {});
}

/** With GATEWAY_PLUGIN_LOG=<file>: one JSON line per thing the plugin did (what the tests read). */
function report(plugin, entry) {
  const file = process.env.GATEWAY_PLUGIN_LOG;
  if (file) fs.appendFileSync(file, `${JSON.stringify({ plugin, at: new Date().toISOString(), ...entry })}\n`);
}
