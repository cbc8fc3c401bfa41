// gateway-orchestrator: an OpenCode plugin that seals its own worker sessions (child sessions of this
// OpenCode, e.g. those a `task` subagent ran in) once a worker's turn is over, before their workspace is
// reused, and reacts to each answer of `sealSession`:
//   SessionSealed          nothing of the worker can run any more: its workspace is free to reuse;
//   SealTimeoutError       admissions are closed but something still runs: call again (the seal keeps waiting
//                          for the same work), up to GATEWAY_SEAL_ATTEMPTS calls;
//   SealUnsupportedError   the host cannot prove termination (`reason`): with a bridge attached to an OpenCode
//                          it does not front, ADMISSION_NOT_EXCLUSIVE (everything known was cancelled, but
//                          another OpenCode client could still prompt the worker): the workspace is NOT
//                          reused; run the bridge with --serve to get SessionSealed.
// See README.md: what must run, how the token is passed. Plain ESM for OpenCode's Bun runtime.
//
// OpenCode calls EVERY exported function of a plugin module as a plugin: this module exports only the
// plugin. Its helpers are module-private.
import fs from 'node:fs';
import {
  GatewayCallError,
  GatewayClient,
  LatestSettlementCursorDocument,
  SealSessionDocument,
  SettledExecutionsDocument,
} from '@agent-history/client';

const SERVICE = 'gateway-orchestrator';

export const GatewayOrchestrator = async ({ client, directory }) => {
  const log = logger(client, SERVICE);
  const token = process.env.GATEWAY_TOKEN; // a plugin token (sealSession needs the plugin role)
  if (!token) {
    await log('warn', 'GATEWAY_TOKEN is not set: the orchestrator plugin does nothing');
    return {};
  }
  const gw = new GatewayClient({ url: process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql', token });
  const owns = ownSessions(client, directory);
  const timeoutMs = Number(process.env.GATEWAY_SEAL_TIMEOUT_MS ?? 30_000);
  const attempts = Number(process.env.GATEWAY_SEAL_ATTEMPTS ?? 5);
  const handled = new Set();

  await followSettlements(gw, log, async ({ executionID, status, execution }) => {
    const session = execution.session;
    // A worker: a session the bridge mirrored with an OpenCode parent.
    if (!session.metadata?.opencode?.parentID) return;
    // Its turn is over when a step ends without asking for more tool calls ("stop"), or does not succeed.
    if (status === 'SUCCEEDED' && execution.finishReason !== 'stop') return;
    if (handled.has(session.id) || session.status === 'SEALED') return;
    if (!(await owns(session))) return; // never another OpenCode's (or another directory's) sessions
    handled.add(session.id);
    const worker = { sessionID: session.id, opencodeSessionID: session.metadata.opencode.sessionID, directory: session.directory, afterExecution: executionID };

    for (let attempt = 1; ; attempt++) {
      let outcome;
      try {
        const sealed = await gw.call(SealSessionDocument, { input: { sessionID: session.id, timeoutMs } });
        outcome = { _tag: 'SessionSealed', sealedAt: sealed.sealedAt, cancelledJobs: sealed.cancelledJobs.map((j) => j.id) };
      } catch (e) {
        if (!(e instanceof GatewayCallError)) throw e;
        outcome = e.error; // { _tag, message, code, ...fields }
      }
      report(SERVICE, { event: 'seal', attempt, ...worker, outcome });
      switch (outcome._tag) {
        case 'SessionSealed':
          await log('info', `worker ${worker.opencodeSessionID} sealed: its workspace ${worker.directory} can be reused`);
          report(SERVICE, { event: 'workspace-free', ...worker });
          return;
        case 'SealTimeoutError':
          await log('warn', `worker ${worker.opencodeSessionID} still stopping (${outcome.pendingJobs.length} jobs, execution ${outcome.pendingExecution?.id ?? 'none'}); attempt ${attempt} of ${attempts}`);
          if (attempt < attempts) continue;
          report(SERVICE, { event: 'workspace-kept', reason: 'SealTimeoutError', ...worker });
          return;
        case 'SealUnsupportedError':
          await log('warn', `worker ${worker.opencodeSessionID} sealed as far as the host can prove (${outcome.reason}; cancelled ${outcome.jobs.length} jobs): workspace ${worker.directory} not reused`);
          report(SERVICE, { event: 'workspace-kept', reason: outcome.reason, ...worker });
          return;
        default: // SessionNotFoundError (removed meanwhile), InvalidRequestError
          await log('error', `seal of worker ${worker.opencodeSessionID}: ${outcome._tag}: ${outcome.message}`);
          report(SERVICE, { event: 'workspace-kept', reason: outcome._tag, ...worker });
          return;
      }
    }
  });
  return {};
};

// ---- module-private helpers (the same in each example; not exported) ----

/**
 * Whether a gateway session is one of this plugin's own: a session the bridge mirrored from OpenCode
 * (`metadata.opencode.sessionID`) that THIS OpenCode knows, in this plugin's project directory.
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

/** `executionSettled` from the log's head, one settlement at a time (resumed from its cursor after a reconnect). */
async function followSettlements(gw, log, onSettled) {
  let after = null;
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

function logger(client, service) {
  return (level, message, extra) => client.app.log({ body: { service, level, message, extra } }).then(() => {}, () => {});
}

/** With GATEWAY_PLUGIN_LOG=<file>: one JSON line per thing the plugin did (what the tests read). */
function report(plugin, entry) {
  const file = process.env.GATEWAY_PLUGIN_LOG;
  if (file) fs.appendFileSync(file, `${JSON.stringify({ plugin, at: new Date().toISOString(), ...entry })}\n`);
}
