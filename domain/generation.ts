import type { Sql } from '../db/connection.js';
import type { Actor } from './access.js';
import { sessionContexts, type ContextMessage } from './corrections.js';
import { HostUnavailableError, InvalidRequestError, ModelNotFoundError } from './errors.js';
import {
  awaitRequest, checkReplyResult, checkTimeout, issueRequest, markReplied, requestHost, requireLive,
  type HostRequestOptions, type HostRequestRow,
} from './host-requests.js';
import { shareSession } from './session-lock.js';
import { checkText, LIMITS, requireId } from './validate.js';

/**
 * generate: a hidden completion run by the session's host with the model the caller names
 * and the session's context (Session.context, then the prompt as a user message). Nothing is written
 * to the session: no message, no journal event. The model must be one the host declared at
 * registerHost; otherwise ModelNotFoundError, never a fall-back to another model (a host that answers
 * with another model than the one asked is a failure: HostUnavailableError(HOST_FAILED)).
 * Allowed while the session is busy or sealed (it changes nothing).
 */

/** Upper bound of a prompt (bytes of UTF-8); larger is an InvalidRequestError. */
export const GENERATE_PROMPT_MAX_BYTES = 256 * 1024;

export interface GenerateInput {
  sessionID: string;
  prompt: string;
  model: { providerID: string; modelID: string };
  timeoutMs?: number | null;
}

export interface Generation {
  text: string;
  providerID: string;
  modelID: string;
  inputTokens: number;
  outputTokens: number;
  commandID: string;
}

export interface GeneratePayload {
  prompt: string;
  model: { providerID: string; modelID: string };
  context: ContextMessage[];
}

export async function generate(sql: Sql, actor: Actor, input: GenerateInput, opts: HostRequestOptions): Promise<Generation> {
  const sessionID = requireId('session', input.sessionID, 'sessionID');
  if (typeof input.prompt !== 'string') throw new InvalidRequestError('prompt', 'prompt is required.');
  const prompt = checkText(input.prompt, 'prompt', GENERATE_PROMPT_MAX_BYTES, { nonEmpty: true });
  if (!input.model || typeof input.model !== 'object') throw new InvalidRequestError('model', 'model { providerID, modelID } is required.');
  const model = {
    providerID: checkText(String(input.model.providerID ?? ''), 'model.providerID', 200, { nonEmpty: true }),
    modelID: checkText(String(input.model.modelID ?? ''), 'model.modelID', 200, { nonEmpty: true }),
  };
  const timeoutMs = checkTimeout(input.timeoutMs, opts.maxTimeoutMs);
  const deadline = Date.now() + timeoutMs;
  const command = await sql.begin(async (tx) => {
    // FOR SHARE: nothing of the session changes, but its removal waits for this admission.
    const s = await shareSession(tx, actor, sessionID);
    const h = await requestHost(tx, s, 'GENERATE');
    const offered = (h.models as { providerID: string; modelID: string }[]) ?? [];
    if (!offered.some((m) => m.providerID === model.providerID && m.modelID === model.modelID)) {
      throw new ModelNotFoundError(sessionID, model.providerID, model.modelID, h.id);
    }
    requireLive(s, h);
    const [context] = await sessionContexts(tx, [sessionID]);
    const payload: GeneratePayload = { prompt, model, context };
    return issueRequest(tx, { hostId: h.id, sessionId: sessionID, kind: 'GENERATE', payload, timeoutMs });
  });
  const r = (await awaitRequest(sql, command, { ...opts, deadline, timeoutMs, owner: true }))!;
  const out = r.reply?.outcome;
  if (out?.kind !== 'GENERATED') {
    throw new HostUnavailableError(sessionID, r.hostId, 'HOST_FAILED', String(out?.error ?? r.reply?.error ?? 'no usable reply'));
  }
  return { text: out.text, providerID: model.providerID, modelID: model.modelID, inputTokens: out.inputTokens, outputTokens: out.outputTokens, commandID: r.id };
}

function tokens(v: unknown, field: string): number {
  if (v === undefined || v === null) return 0;
  if (!Number.isInteger(v) || (v as number) < 0) throw new InvalidRequestError(field, `${field} must be a non-negative integer.`);
  return v as number;
}

/** The host's reply to a GENERATE command: `{ text, inputTokens, outputTokens, providerID?, modelID? }` or an error. */
export async function replyGeneration(sql: Sql, c: HostRequestRow, result: unknown, error: string | null): Promise<HostRequestRow> {
  let outcome: Record<string, unknown>;
  if (error !== null) {
    outcome = { kind: 'FAILED', error };
  } else {
    const r = checkReplyResult(result);
    if (typeof r.text !== 'string') throw new InvalidRequestError('result.text', 'result.text (a string) is required.');
    const text = checkText(r.text, 'result.text', LIMITS.textBytes);
    const asked = (c.payload as GeneratePayload).model;
    const usedOther = (r.providerID != null && r.providerID !== asked.providerID) || (r.modelID != null && r.modelID !== asked.modelID);
    outcome = usedOther
      ? { kind: 'FAILED', error: `the host answered with ${r.providerID}/${r.modelID}, not the requested ${asked.providerID}/${asked.modelID}` }
      : { kind: 'GENERATED', text, inputTokens: tokens(r.inputTokens, 'result.inputTokens'), outputTokens: tokens(r.outputTokens, 'result.outputTokens') };
  }
  return sql.begin((tx) => markReplied(tx, c, { outcome }));
}
