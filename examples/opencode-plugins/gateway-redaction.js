// gateway-redaction: an OpenCode plugin that corrects a secret the model wrote in one of ITS OWN sessions,
// so the next model request no longer contains it. When an execution of an own session settles it reads the
// execution's messages, and every text part holding a secret (API keys and tokens of the usual shapes, a
// private key block, or GATEWAY_REDACT_PATTERN) is corrected on the gateway (`correctMessagePart`, the same
// message and part IDs, `revision` raised); the bridge applies the correction to OpenCode, whose next model
// request is built from the corrected text. A correction is refused with SessionBusyError while a step of
// the session runs (it never lands inside one): the plugin keeps it and tries again when the session goes
// idle (OpenCode's `session.idle` event) or its next execution settles.
//
// What it cannot do: a secret written in the middle of a turn reaches the turn's later steps before the
// session is idle; tool inputs and outputs are not text parts (`correctMessagePart` corrects text parts
// only); the gateway's journal keeps the original event (a correction is not erasure).
// See README.md: what must run, how the token is passed. Plain ESM for OpenCode's Bun runtime.
//
// OpenCode calls EVERY exported function of a plugin module as a plugin: this module exports only the
// plugin. Its helpers are module-private.
import fs from 'node:fs';
import {
  CorrectMessagePartDocument,
  ExecutionMessagesDocument,
  GatewayCallError,
  GatewayClient,
  LatestSettlementCursorDocument,
  SettledExecutionsDocument,
  StoredMessageDocument,
} from '@agent-history/client';

const SERVICE = 'gateway-redaction';

export const GatewayRedaction = async ({ client, directory }) => {
  const log = logger(client, SERVICE);
  const token = process.env.GATEWAY_TOKEN; // a plugin token (correctMessagePart needs the plugin role)
  if (!token) {
    await log('warn', 'GATEWAY_TOKEN is not set: the redaction plugin does nothing');
    return {};
  }
  const gw = new GatewayClient({ url: process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql', token });
  const owns = ownSessions(client, directory);
  const patterns = secretPatterns(process.env.GATEWAY_REDACT_PATTERN);
  /** Parts still to correct, by gateway session: Map<sessionID, Map<partID, messageID>>. */
  const pending = new Map();
  /** OpenCode session ID -> gateway session ID, for the `session.idle` retry. */
  const gatewayIDs = new Map();
  let chain = Promise.resolve();
  const serially = (fn) => { chain = chain.then(fn).catch((e) => log('error', e?.message ?? JSON.stringify(e))); return chain; };

  /** Corrects one part if it (still) holds a secret; false when the session is busy (kept for later). */
  const redactPart = async (sessionID, messageID, partID) => {
    const { message } = await gw.request(StoredMessageDocument, { id: messageID });
    const part = message?.parts.find((p) => p.id === partID);
    if (!message || message.retraction || part?.__typename !== 'TextPart') return true;
    const text = redact(part.text, patterns);
    if (text === part.text) return true;
    try {
      const r = await gw.call(CorrectMessagePartDocument, { input: { messageID, partID, text } });
      await log('info', `redacted a secret in message ${messageID} (part ${partID}, revision ${r.part.revision})`);
      report(SERVICE, { event: 'redacted', sessionID, messageID, partID, revision: r.part.revision });
      return true;
    } catch (e) {
      if (e instanceof GatewayCallError && e.error._tag === 'SessionBusyError') {
        report(SERVICE, { event: 'busy', sessionID, messageID, partID, executionID: e.error.executionID });
        return false; // an execution runs: tried again when the session is idle
      }
      throw e;
    }
  };

  const retryPending = async (sessionID) => {
    const parts = pending.get(sessionID);
    for (const [partID, messageID] of parts ?? []) {
      if (await redactPart(sessionID, messageID, partID)) parts.delete(partID);
      else return;
    }
  };

  await followSettlements(gw, log, (settlement) => serially(async () => {
    const session = settlement.execution.session;
    if (!(await owns(session))) return;
    gatewayIDs.set(session.metadata.opencode.sessionID, session.id);
    const { execution } = await gw.request(ExecutionMessagesDocument, { id: settlement.executionID, first: 100 });
    const parts = pending.get(session.id) ?? new Map();
    pending.set(session.id, parts);
    for (const { node: m } of execution?.messages.edges ?? []) {
      if (m.retraction) continue;
      for (const p of m.parts) if (p.__typename === 'TextPart' && redact(p.text, patterns) !== p.text) parts.set(p.id, m.id);
    }
    await retryPending(session.id);
  }));

  return {
    event: async ({ event }) => {
      if (event.type !== 'session.idle') return;
      const sessionID = gatewayIDs.get(event.properties.sessionID);
      if (sessionID && pending.get(sessionID)?.size) serially(() => retryPending(sessionID));
    },
  };
};

// ---- module-private helpers (not exported) ----

function secretPatterns(extra) {
  const patterns = [
    /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}/g, // OpenAI / Anthropic style API keys
    /\bAKIA[0-9A-Z]{16}\b/g, // AWS access key IDs
    /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g, // GitHub tokens
    /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, // Slack tokens
    /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
  ];
  if (extra) patterns.push(new RegExp(extra, 'g'));
  return patterns;
}

function redact(text, patterns) {
  return patterns.reduce((t, re) => t.replace(re, '[REDACTED]'), text);
}

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

/** `executionSettled` from the log's head (resumed from its cursor after a reconnect), in the log's order. */
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
  gw.subscribe(SettledExecutionsDocument, { after }, {
    next: (data) => { onSettled(data.executionSettled); },
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
