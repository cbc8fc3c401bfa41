// Gemini CLI's chat history (`~/.gemini/tmp/<project>/chats/session-<start>-<id8>.jsonl`, the hooks'
// `transcript_path`), parsed at the boundary: every line is checked field by field into the types below (no casts;
// a line that is not JSON, or a record of a shape this does not know, is skipped and counted, never thrown).
// Records (0.61.0, ../shared/gemini/README.md): a header `{sessionId, projectHash, startTime, kind}` (again at each
// resume); a message `{id, timestamp, type: "user" | "gemini" | …, content, thoughts?, tokens?, model?, toolCalls?}`,
// written when it happens and again, with the same ID, when it changed (a model message once its tool calls
// finished); `{"$set": {"messages": […]}}` replacing the whole list (start, resume, compression, an API error);
// `{"$rewindTo": id}` dropping that message and all after it. Gemini CLI loads the file by replaying it in order
// into a list keyed by ID (a record with a known ID replaces that message in place): `loadConversation` does the
// same, so what it answers is what the next request is built from. That is also how the host writes corrections
// and retractions: it appends a record with the message's ID (`appendedEdits`), and edits the earlier copies alike
// so the old text leaves the file (an edit in place alone is undone by the copy a resume wrote).

export interface ChatThought { subject: string; description: string; timestamp: string | null }
export interface ChatTokens { input: number; output: number; cached: number; thoughts: number; tool: number; total: number }
export interface ChatPart { text?: string; thought?: boolean; functionCall?: { id: string | null; name: string; args: unknown }; functionResponse?: { id: string | null; name: string; output: string | null; error: boolean; raw: Record<string, unknown> } }
export interface ChatToolCall {
  id: string; name: string; args: unknown; status: string;
  /** The text the model was given (the functionResponse's `output` or `error`). */
  output: string | null;
  /** The record as written (kept whole: an appended edit rewrites its result and writes the rest back unchanged). */
  raw: Record<string, unknown>;
}
export interface ChatMessage {
  id: string;
  timestamp: string | null;
  type: string;
  /** The text of `content` (a string, or the text parts of a parts list). */
  text: string;
  parts: ChatPart[];
  thoughts: ChatThought[];
  tokens: ChatTokens | null;
  model: string | null;
  toolCalls: ChatToolCall[];
  raw: Record<string, unknown>;
  /** A copy a compression wrote (new IDs and times for the messages it kept): not a turn of its own. */
  compressed?: boolean;
}

export type JsonObject = Record<string, unknown>;
export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (o: JsonObject, k: string): string | null => (typeof o[k] === 'string' ? o[k] : null);
const num = (o: JsonObject, k: string): number => (typeof o[k] === 'number' && Number.isFinite(o[k]) ? o[k] : 0);
const objects = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.filter(isObject) : []);

function partOf(p: JsonObject): ChatPart {
  const out: ChatPart = {};
  if (typeof p.text === 'string') out.text = p.text;
  if (p.thought === true) out.thought = true;
  if (isObject(p.functionCall)) out.functionCall = { id: str(p.functionCall, 'id'), name: str(p.functionCall, 'name') ?? '?', args: p.functionCall.args ?? null };
  if (isObject(p.functionResponse)) {
    const r = p.functionResponse;
    const resp = isObject(r.response) ? r.response : {};
    const output = typeof resp.output === 'string' ? resp.output : typeof resp.error === 'string' ? resp.error : null;
    out.functionResponse = { id: str(r, 'id'), name: str(r, 'name') ?? '?', output, error: typeof resp.error === 'string', raw: r };
  }
  return out;
}

/** A message record, or null when the object is not one (a header, a `$set`, an unknown shape). */
export function messageOf(o: JsonObject): ChatMessage | null {
  const id = str(o, 'id');
  const type = str(o, 'type');
  if (!id || !type) return null;
  const parts = typeof o.content === 'string' ? [{ text: o.content }] : objects(o.content).map(partOf);
  const t = isObject(o.tokens) ? o.tokens : null;
  return {
    id, type, timestamp: str(o, 'timestamp'), raw: o, parts, model: str(o, 'model'),
    text: parts.filter((p) => p.text !== undefined && !p.thought).map((p) => p.text).join(''),
    thoughts: objects(o.thoughts).map((x) => ({ subject: str(x, 'subject') ?? '', description: str(x, 'description') ?? '', timestamp: str(x, 'timestamp') })),
    tokens: t ? { input: num(t, 'input'), output: num(t, 'output'), cached: num(t, 'cached'), thoughts: num(t, 'thoughts'), tool: num(t, 'tool'), total: num(t, 'total') } : null,
    toolCalls: objects(o.toolCalls).map((c) => {
      const result = objects(c.result).map(partOf).find((p) => p.functionResponse)?.functionResponse;
      return { id: str(c, 'id') ?? '', name: str(c, 'name') ?? '?', args: c.args ?? null, status: str(c, 'status') ?? '', output: result?.output ?? null, raw: c };
    }),
  };
}

export interface Conversation {
  sessionId: string | null;
  /** The messages as Gemini CLI would load them (the last record of each ID, `$set` and `$rewindTo` applied). */
  messages: ChatMessage[];
  /** Lines that were not JSON objects of a known shape. */
  skipped: number;
}

/** Replays the file as Gemini CLI's loader does. */
export function loadConversation(text: string): Conversation {
  let list: ChatMessage[] = [];
  let sessionId: string | null = null;
  let skipped = 0;
  const seen = new Set<string>();
  const compressed = new Set<string>();
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    let v: unknown;
    try { v = JSON.parse(raw); } catch { skipped++; continue; }
    if (!isObject(v)) { skipped++; continue; }
    if (isObject(v.$set)) {
      if (Array.isArray(v.$set.messages)) {
        list = objects(v.$set.messages).map(messageOf).filter((m): m is ChatMessage => m !== null);
        // A compression's history (its `<state_snapshot>` summary first): the messages it kept come with new IDs and
        // times, copies of turns that ran before it; a resume's later copy of them keeps those IDs.
        if (list.some((m) => m.type === 'user' && m.text.trimStart().startsWith('<state_snapshot>'))) for (const m of list) if (!seen.has(m.id)) compressed.add(m.id);
        for (const m of list) { seen.add(m.id); if (compressed.has(m.id)) m.compressed = true; }
      }
      if (typeof v.$set.sessionId === 'string') sessionId = v.$set.sessionId;
      continue;
    }
    if (typeof v.$rewindTo === 'string') {
      const i = list.findIndex((m) => m.id === v.$rewindTo);
      if (i >= 0) list = list.slice(0, i);
      continue;
    }
    const m = messageOf(v);
    if (m) {
      seen.add(m.id);
      if (compressed.has(m.id)) m.compressed = true;
      const i = list.findIndex((x) => x.id === m.id);
      if (i >= 0) list[i] = m; else list.push(m);
      continue;
    }
    if (typeof v.sessionId === 'string') { sessionId = v.sessionId; continue; }
    skipped++;
  }
  return { sessionId, messages: list, skipped };
}

/** Whether a user message is a prompt: text of the user's, not Gemini CLI's own `<session_context>`, nor tool results. */
export function isPrompt(m: ChatMessage): boolean {
  if (m.type !== 'user' || m.parts.some((p) => p.functionResponse) || m.id.endsWith('_response')) return false;
  const t = m.text.trimStart();
  // Gemini CLI's commands (`/compress`…) and context are not sent to the model as prompts; a compression's summary
  // (`<state_snapshot>`, answered "Got it") is not a turn.
  return t !== '' && !/^([/?]|<session_context>|<hook_context>|<state_snapshot>)/.test(t);
}

/** Where a gateway part lives in the history: a message's text, one of its thoughts, or a tool call's result. */
export type Locator =
  | { kind: 'text'; messageId: string }
  | { kind: 'thought'; messageId: string; index: number }
  | { kind: 'tool'; messageId: string; callId: string };

export interface StepPart { type: 'TEXT' | 'REASONING' | 'TOOL'; text?: string; tool?: string; input?: unknown; output?: string | null; status?: 'completed' | 'error'; externalID?: string }
/** One model response: its parts, where each lives, its model and usage. */
export interface Step { id: string; parts: StepPart[]; locators: Locator[]; model: string | null; tokens: ChatTokens | null; timestamp: string | null }

/** A run_shell_command of the turn, as the history shows it once it returned. */
export interface ShellCall {
  callId: string; command: string; exitCode: number | null; signal: string | null;
  /** `is_background`: moved to the background (its PID), or `&` jobs it left running (their PIDs). */
  background: boolean; pids: number[]; pgid: number | null;
}

import type { ModelCall, TokenUsage } from '../hooks-host/turn.js';

export interface GeminiTurn {
  promptId: string;
  prompt: string;
  timestamp: string | null;
  steps: Step[];
  shells: ShellCall[];
  model: string | null;
  /** One per model response, in order (the kit sums them into the turn's usage). */
  calls: ModelCall[];
  /** The turn's last model message is text without tool calls: the model answered (a turn cut short ends on tool calls or its prompt). */
  answered: boolean;
}

/** What a shell's result says: `Exit Code: N`, `Signal: S`, `Background PIDs: …`, `Process Group PGID: N`, `moved to background (PID: N)`. */
export function shellResult(output: string | null): { exitCode: number | null; signal: string | null; background: boolean; pids: number[]; pgid: number | null } {
  const o = output ?? '';
  const code = /^Exit Code: (-?\d+)/m.exec(o);
  const signal = /^Signal: (.+)$/m.exec(o)?.[1]?.trim() ?? null;
  const moved = /moved to background \(PID: (\d+)\)/.exec(o);
  const bg = /^Background PIDs: (.+)$/m.exec(o)?.[1]?.split(/[,\s]+/).map(Number).filter((n) => n > 0) ?? [];
  const pgid = /^Process Group PGID: (\d+)/m.exec(o);
  const cancelled = /^Command was (automatically )?cancelled/m.test(o) || /cancelled by user/i.test(o);
  return {
    exitCode: code ? Number(code[1]) : signal || cancelled || moved ? null : 0, signal: signal ?? (cancelled ? 'cancelled' : null),
    background: !!moved || bg.length > 0, pids: moved ? [Number(moved[1])] : bg, pgid: pgid ? Number(pgid[1]) : null,
  };
}

const commandOf = (args: unknown): string => (isObject(args) && typeof args.command === 'string' ? args.command : JSON.stringify(args ?? null));

/**
 * A model message's tool calls: its `toolCalls` as recorded live, or, in the shape a resume writes the history back
 * (`$set.messages`: the API's parts), its `functionCall` parts with their results from the user messages that
 * carried them (`results`).
 */
function callsOf(m: ChatMessage, results: Map<string, { output: string | null; error: boolean }>): ChatToolCall[] {
  if (m.toolCalls.length) return m.toolCalls;
  return m.parts.flatMap((p) => (p.functionCall ? [p.functionCall] : [])).map((f) => {
    const r = f.id ? results.get(f.id) : undefined;
    return { id: f.id ?? '', name: f.name, args: f.args, status: r ? (r.error ? 'error' : 'success') : '', output: r?.output ?? null, raw: {} };
  });
}

/**
 * A response's tokens in the gateway's one meaning: Gemini's `promptTokenCount` (`tokens.input`) counts the cached
 * tokens too, as the gateway's input does; its `candidatesTokenCount` (`tokens.output`) leaves the thoughts out,
 * which the gateway's output counts.
 */
export function usageOf(k: ChatTokens): TokenUsage {
  return { inputTokens: k.input, outputTokens: k.output + k.thoughts, reasoningTokens: k.thoughts, cacheReadTokens: k.cached, cacheWriteTokens: 0,
    cacheWrite5mTokens: null, cacheWrite1hTokens: null };
}

/** The turns of a conversation: each prompt with the model messages and tool results after it. */
export function turnsOf(c: Conversation): GeminiTurn[] {
  const turns: GeminiTurn[] = [];
  let t: GeminiTurn | null = null;
  const results = new Map<string, { output: string | null; error: boolean }>();
  for (const m of c.messages) {
    for (const p of m.type === 'user' ? m.parts : []) {
      if (p.functionResponse?.id && !results.has(p.functionResponse.id)) results.set(p.functionResponse.id, { output: p.functionResponse.output, error: p.functionResponse.error });
    }
  }
  for (const [i, m] of c.messages.entries()) {
    /** What the model call answered (the prompt, or the tool results it was sent): written just before it started. */
    const before: ChatMessage | undefined = c.messages[i - 1];
    // A compression's copies of turns that ran before it are no turns of their own (their originals were).
    if (m.compressed) { if (m.type === 'user' && m.parts.some((p) => p.text !== undefined)) t = null; continue; }
    if (isPrompt(m)) {
      t = { promptId: m.id, prompt: m.text, timestamp: m.timestamp, steps: [], shells: [], model: null, calls: [], answered: false };
      turns.push(t);
      continue;
    }
    if (!t || m.type !== 'gemini') continue;
    const step: Step = { id: m.id, parts: [], locators: [], model: m.model, tokens: m.tokens, timestamp: m.timestamp };
    // Thoughts: `thoughts` as recorded live, or thought parts in a resume's shape.
    const thoughts = m.thoughts.length ? m.thoughts.map((th) => [th.subject, th.description].filter(Boolean).join('\n'))
      : m.parts.filter((p) => p.thought && p.text).map((p) => p.text ?? '');
    thoughts.forEach((text, index) => {
      if (text) { step.parts.push({ type: 'REASONING', text }); step.locators.push({ kind: 'thought', messageId: m.id, index }); }
    });
    if (m.text) { step.parts.push({ type: 'TEXT', text: m.text }); step.locators.push({ kind: 'text', messageId: m.id }); }
    const calls = callsOf(m, results);
    for (const call of calls) {
      const shell = call.name === 'run_shell_command' ? shellResult(call.output) : null;
      const failed = call.status !== 'success' || (shell !== null && shell.exitCode !== 0 && !shell.background);
      step.parts.push({ type: 'TOOL', tool: call.name, input: call.args, output: call.output, status: failed ? 'error' : 'completed', externalID: call.id });
      step.locators.push({ kind: 'tool', messageId: m.id, callId: call.id });
      if (shell) t.shells.push({ callId: call.id, command: commandOf(call.args), ...shell });
    }
    if (step.parts.length) t.steps.push(step);
    // Answered: text and no tool calls. A response with calls is first written without them (and stays so when
    // Gemini CLI is stopped before they return), its text empty.
    t.answered = calls.length === 0 && m.text.trim() !== '';
    if (m.model) t.model = m.model;
    // The call began after what it answers (the prompt, or the tool results it was sent), and was written when its
    // response completed: both times Gemini CLI's own.
    t.calls.push({ externalID: m.id, providerID: 'google', modelID: m.model, startedAt: before?.timestamp ?? null, endedAt: m.timestamp, timesFrom: 'AGENT',
      finishReason: null, usage: m.tokens ? usageOf(m.tokens) : null });
  }
  return turns;
}

/** A correction or retraction to write into the history. */
export type ChatEdit =
  | { kind: 'correct'; at: Locator; text: string }
  | { kind: 'retract'; at: Locator[]; placeholder: string };

type EditOp = { e: ChatEdit; at: Locator; text: string };

/** A tool call's result, in the message that holds it (its `toolCalls`, or a user message's functionResponse parts), set to `text`. */
function setToolOutput(r: JsonObject, callId: string, text: string): boolean {
  const setOutput = (part: unknown) => {
    if (!isObject(part) || !isObject(part.functionResponse) || part.functionResponse.id !== callId) return false;
    part.functionResponse.response = { output: text };
    return true;
  };
  let ok = false;
  for (const c of Array.isArray(r.toolCalls) ? r.toolCalls : []) {
    if (isObject(c) && c.id === callId && Array.isArray(c.result)) { ok = c.result.map(setOutput).some(Boolean) || ok; c.resultDisplay = text; }
  }
  if (r.type === 'user' && Array.isArray(r.content)) ok = r.content.map(setOutput).some(Boolean) || ok;
  return ok;
}

/** An edit applied to one copy of the message it names (the live shape, or a resume's); answers whether it found its place. */
function applyOp(r: JsonObject, op: EditOp): boolean {
  if (op.at.kind === 'text') {
    if (typeof r.content === 'string') { r.content = op.text; return true; }
    if (!Array.isArray(r.content)) return false;
    // The text parts replaced by one; thought and function-call parts (a resume's shape) kept.
    const kept = r.content.filter((p: unknown) => !(isObject(p) && typeof p.text === 'string' && p.thought !== true));
    r.content = [{ text: op.text }, ...kept];
    return true;
  }
  if (op.at.kind === 'thought') {
    const i = op.at.index;
    const thoughtParts = Array.isArray(r.content) ? r.content.filter((p: unknown) => isObject(p) && p.thought === true) : [];
    if (Array.isArray(r.thoughts) && r.thoughts.length && isObject(r.thoughts[i])) { r.thoughts[i] = { ...r.thoughts[i], subject: '', description: op.text }; return true; }
    if (isObject(thoughtParts[i])) { thoughtParts[i].text = op.text; return true; }
    return false;
  }
  return setToolOutput(r, op.at.callId, op.text);
}

/** Every edit that touches a message record (the one it names; a tool call's result in the user messages that carried it). */
function editCopy(r: JsonObject, ops: EditOp[]): boolean {
  let changed = false;
  for (const op of ops) {
    if (r.id === op.at.messageId) changed = applyOp(r, op) || changed;
    else if (op.at.kind === 'tool' && r.type === 'user') changed = setToolOutput(r, op.at.callId, op.text) || changed;
  }
  return changed;
}

/**
 * The history with the edits written in: per message they touch, one record appended with its ID and the edited
 * content (a tool call's result and the user messages that carried it to the model too), which Gemini CLI's loader
 * puts in place of the message for the next request; and every earlier copy of those messages (their first and
 * later records, a resume's `$set.messages`) edited the same way, so the old text leaves the file. Answers the
 * new text and how many edits found their message.
 */
export function appendedEdits(text: string, edits: ChatEdit[]): { text: string; applied: number } {
  const conv = loadConversation(text);
  const changed = new Map<string, JsonObject>();
  const current = (m: ChatMessage): JsonObject => changed.get(m.id) ?? structuredClone(m.raw);
  const ops: EditOp[] = edits.flatMap((e): EditOp[] => (e.kind === 'correct' ? [{ e, at: e.at, text: e.text }] : e.at.map((at) => ({ e, at, text: e.placeholder }))));
  const hit = new Set<ChatEdit>();
  for (const op of ops) {
    const m = conv.messages.find((x) => x.id === op.at.messageId);
    if (!m) continue;
    const r = current(m);
    let ok = applyOp(r, op);
    if (op.at.kind === 'tool') {
      // The user message that carried the result to the model (and a resume's synthetic `<id>_response`).
      const callId = op.at.callId;
      for (const u of conv.messages) {
        if (u.type !== 'user' || !u.parts.some((p) => p.functionResponse?.id === callId)) continue;
        const ur = current(u);
        if (setToolOutput(ur, callId, op.text)) { changed.set(u.id, ur); ok = true; }
      }
    }
    if (ok) { changed.set(m.id, r); hit.add(op.e); }
  }
  if (!changed.size) return { text, applied: 0 };
  const earlier = text.split('\n').map((raw) => {
    let v: unknown;
    try { v = JSON.parse(raw); } catch { return raw; }
    if (!isObject(v)) return raw;
    let edited = false;
    if (isObject(v.$set) && Array.isArray(v.$set.messages)) for (const m of v.$set.messages) edited = (isObject(m) && editCopy(m, ops)) || edited;
    else if (typeof v.id === 'string') edited = editCopy(v, ops);
    return edited ? JSON.stringify(v) : raw;
  }).join('\n');
  const lines = [...changed.values()].map((r) => JSON.stringify(r));
  return { text: `${earlier}${earlier.endsWith('\n') || !earlier ? '' : '\n'}${lines.join('\n')}\n`, applied: hit.size };
}
