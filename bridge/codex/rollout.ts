// Codex's rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<thread id>.jsonl`, one JSON object a line:
// `{timestamp, type, payload}`), read defensively (a line that does not parse, a type or item it does not know:
// skipped, never thrown), and rewritten for corrections. Line types (0.169.0, ../shared/codex/README.md):
// `session_meta`, `turn_context` (one per turn: `turn_id`, `model`), `response_item` (what the model is sent
// again on resume: `message`, `reasoning`, `function_call` / `function_call_output`, `custom_tool_call` /
// `custom_tool_call_output`), `event_msg` (`task_started`, `item_completed` with the executed command's exit
// code, `token_count`, `task_complete`, `turn_aborted`, `error`), `token_usage_record` (one per model response).
// A turn is the lines from its `task_started` to its `task_complete` / `turn_aborted`; its steps (one gateway
// message each) are the model responses, delimited by `token_usage_record`.
import { readJsonLines } from '../hooks-host/atomic-rewrite.js';
import type { ModelCall } from '../hooks-host/turn.js';

export interface RolloutLine { timestamp?: string; type?: string; payload?: any }

export function parseRollout(text: string): { lines: RolloutLine[]; skipped: number } {
  return readJsonLines<RolloutLine>(text);
}

/** Where a gateway part lives in the rollout (corrections and retractions are written there). */
export type Locator =
  | { kind: 'prompt'; turnId: string }
  | { kind: 'text'; itemId: string }
  | { kind: 'reasoning'; itemId: string; index: number }
  | { kind: 'tool'; callId: string };

export interface StepPart {
  type: 'TEXT' | 'REASONING' | 'TOOL';
  text?: string;
  tool?: string;
  input?: unknown;
  output?: string | null;
  status?: 'completed' | 'error' | 'running';
  externalID?: string;
  /** A tool call's start and end as the rollout has them: its call line's time, its output line's. */
  startedAt?: string;
  endedAt?: string;
}

export interface Step { id: string; parts: StepPart[]; locators: Locator[] }

/**
 * An `exec_command` of the turn. `done` once it ended: by itself (`exitCode`), or stopped by Codex (`killed`: its
 * `CommandExecution` item completed with exit code -1, as Codex writes for a terminal it ends with the turn).
 * `running`: its answer to the model said it was still running (past `yield_time_ms`).
 */
export interface ShellCall { callId: string; command: string; exitCode: number | null; running: boolean; done: boolean; killed: boolean }

export interface Usage { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number; reasoningTokens: number }

export interface CodexTurn {
  turnId: string;
  prompt: string | null;
  steps: Step[];
  shells: ShellCall[];
  model: string | null;
  usage: Usage | null;
  /**
   * Its model calls: one per `token_usage_record` (one per model response), with that response's usage; its end
   * is the record's time, its start the time of the last line the request followed (the turn's start, the prompt,
   * a tool's output, the previous response): the rollout's own timestamps.
   */
  calls: { startedAt: string | null; endedAt: string | null; usage: Usage }[];
  /** `task_complete`: the turn ended; `aborted`: Codex's `turn_aborted` (its reason); null: not ended (yet). */
  end: { kind: 'complete'; lastText: string | null } | { kind: 'aborted'; reason: string } | null;
  /** The API error Codex reported (an `error` event of the turn). */
  error: string | null;
}

const turnOfItem = (p: any): string | null => p?.internal_chat_message_metadata_passthrough?.turn_id ?? p?.turn_id ?? null;

const textOf = (content: unknown): string => (Array.isArray(content)
  ? content.map((c: any) => (typeof c?.text === 'string' ? c.text : '')).join('')
  : typeof content === 'string' ? content : '');

/** Whether a user message is a prompt (not Codex's own `<environment_context>`, `<turn_aborted>`…). */
export const isPromptText = (t: string) => !t.trimStart().startsWith('<');

/** The turn IDs of the rollout, in order (each `task_started`). */
export function turnIds(lines: RolloutLine[]): string[] {
  const out: string[] = [];
  for (const l of lines) {
    if (l.type === 'event_msg' && l.payload?.type === 'task_started' && typeof l.payload.turn_id === 'string' && !out.includes(l.payload.turn_id)) out.push(l.payload.turn_id);
  }
  return out;
}

/**
 * The turns of the rollout that carry a prompt, in order: not Codex's own context compactions (the app-server's
 * `thread/compact/start`, the TUI's `/compact`: a `compacted` line, no prompt), nor a turn whose prompt a
 * UserPromptSubmit hook blocked (Codex writes its `task_started` and `task_complete`, not the prompt).
 */
export function promptTurnIds(lines: RolloutLine[]): string[] {
  const prompted = new Set<string>();
  let turn: string | null = null;
  for (const l of lines) {
    const p = l.payload;
    if (l.type === 'event_msg' && p?.type === 'task_started') turn = typeof p.turn_id === 'string' ? p.turn_id : null;
    else if (l.type === 'response_item' && p?.type === 'message' && p.role === 'user' && isPromptText(textOf(p.content))) {
      const of = turnOfItem(p) ?? turn;
      if (of) prompted.add(of);
    }
  }
  return turnIds(lines).filter((id) => prompted.has(id));
}

/** The thread's ID from its first line (`session_meta`). */
export const threadOf = (lines: RolloutLine[]): string | null => {
  const m = lines.find((l) => l.type === 'session_meta');
  return typeof m?.payload?.id === 'string' ? m.payload.id : null;
};

/** Shell output from unified exec: `Process exited with code N`, or still running (`Process running with session ID n`). */
export function shellResult(output: string | null | undefined): { exitCode: number | null; running: boolean } {
  const o = output ?? '';
  const m = /Process exited with code (-?\d+)/.exec(o);
  if (m) return { exitCode: Number(m[1]), running: false };
  return { exitCode: null, running: /Process running with session ID/.test(o) };
}

export function turnOf(lines: RolloutLine[], turnId: string): CodexTurn {
  const t: CodexTurn = { turnId, prompt: null, steps: [], shells: [], model: null, usage: null, calls: [], end: null, error: null };
  /** When the last input of the next model request was written (see CodexTurn.calls). */
  let lastInputAt: string | null = null;
  const at = (l: RolloutLine) => (typeof l.timestamp === 'string' ? l.timestamp : null);
  let inTurn = false;
  let step: Step | null = null;
  const tools = new Map<string, StepPart>();
  const exits = new Map<string, number | null>();
  /** MCP calls' statuses (`item_completed` McpToolCall). */
  const mcp = new Map<string, string>();
  const usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
  let sawUsage = false;
  const open = (id: string) => {
    if (!step) { step = { id, parts: [], locators: [] }; t.steps.push(step); }
    return step;
  };
  for (const l of lines) {
    const p = l.payload;
    if (!p || typeof p !== 'object') continue;
    if (l.type === 'event_msg' && p.type === 'task_started') { inTurn = p.turn_id === turnId; step = null; if (inTurn) lastInputAt = at(l); continue; }
    if (l.type === 'turn_context' && p.turn_id === turnId && typeof p.model === 'string') t.model = p.model;
    const mine = inTurn || turnOfItem(p) === turnId;
    if (!mine) continue;
    if (l.type === 'token_usage_record' && (p.turn_id ?? turnId) === turnId) {
      const u = p.usage ?? {};
      t.calls.push({ startedAt: lastInputAt, endedAt: at(l), usage: {
        inputTokens: Number(u.input_tokens ?? 0), outputTokens: Number(u.output_tokens ?? 0), cacheReadTokens: Number(u.cached_input_tokens ?? 0),
        cacheWriteTokens: Number(u.cache_write_input_tokens ?? 0), reasoningTokens: Number(u.reasoning_output_tokens ?? 0) } });
      lastInputAt = at(l);
      usage.inputTokens += Number(u.input_tokens ?? 0);
      usage.outputTokens += Number(u.output_tokens ?? 0);
      usage.cacheReadTokens += Number(u.cached_input_tokens ?? 0);
      usage.cacheWriteTokens += Number(u.cache_write_input_tokens ?? 0);
      usage.reasoningTokens += Number(u.reasoning_output_tokens ?? 0);
      sawUsage = true;
      step = null; // the next response is the next step
      continue;
    }
    if (l.type === 'event_msg') {
      if (p.type === 'task_complete' && p.turn_id === turnId) {
        t.end = { kind: 'complete', lastText: p.last_agent_message ?? null };
        // A turn the model API failed (after Codex's retries): its error, with Codex's classification.
        if (p.error && typeof p.error.message === 'string') t.error = `${p.error.message}${p.error.codex_error_info ? ` (${p.error.codex_error_info})` : ''}`;
        inTurn = false;
      }
      else if (p.type === 'turn_aborted' && (p.turn_id ?? turnId) === turnId) { t.end = { kind: 'aborted', reason: String(p.reason ?? 'interrupted') }; inTurn = false; }
      else if (p.type === 'error' && typeof p.message === 'string') t.error = p.message;
      else if (p.type === 'item_completed' && p.item?.type === 'CommandExecution' && typeof p.item.id === 'string') exits.set(p.item.id, typeof p.item.exit_code === 'number' ? p.item.exit_code : null);
      else if (p.type === 'item_completed' && p.item?.type === 'McpToolCall' && typeof p.item.id === 'string') mcp.set(p.item.id, String(p.item.status ?? ''));
      continue;
    }
    if (l.type !== 'response_item') continue;
    switch (p.type) {
      case 'message': {
        const text = textOf(p.content);
        if (p.role === 'user') {
          lastInputAt = at(l) ?? lastInputAt;
          if (t.prompt === null && isPromptText(text)) t.prompt = text;
        } else if (p.role === 'assistant' && text) {
          const s = open(String(p.id ?? `${turnId}:${t.steps.length}`));
          s.parts.push({ type: 'TEXT', text });
          s.locators.push({ kind: 'text', itemId: String(p.id ?? '') });
        }
        break;
      }
      case 'reasoning': {
        const s = open(String(p.id ?? `${turnId}:${t.steps.length}`));
        (Array.isArray(p.summary) ? p.summary : []).forEach((x: any, index: number) => {
          if (typeof x?.text !== 'string' || !x.text) return;
          s.parts.push({ type: 'REASONING', text: x.text });
          s.locators.push({ kind: 'reasoning', itemId: String(p.id ?? ''), index });
        });
        break;
      }
      case 'function_call': case 'custom_tool_call': {
        const callId = String(p.call_id ?? '');
        const s = open(String(p.id ?? callId));
        let input: unknown = p.type === 'custom_tool_call' ? { input: p.input } : p.arguments;
        if (typeof input === 'string') { try { input = JSON.parse(input); } catch { input = { arguments: input }; } }
        // An MCP tool: namespace `mcp__<server>`, named as the hooks name it (`mcp__<server>__<tool>`).
        const name = p.namespace ? `${String(p.namespace).replace(/_*$/, '')}__${p.name}` : String(p.name ?? '?');
        const part: StepPart = { type: 'TOOL', tool: name, input, output: null, status: 'running', externalID: callId, ...(at(l) ? { startedAt: at(l)! } : {}) };
        s.parts.push(part);
        s.locators.push({ kind: 'tool', callId });
        tools.set(callId, part);
        if (p.name === 'exec_command') {
          const cmd = (input as any)?.cmd;
          t.shells.push({ callId, command: typeof cmd === 'string' ? cmd : JSON.stringify(input), exitCode: null, running: true, done: false, killed: false });
        }
        break;
      }
      case 'function_call_output': case 'custom_tool_call_output': {
        lastInputAt = at(l) ?? lastInputAt;
        const part = tools.get(String(p.call_id ?? ''));
        if (!part) break;
        const out = typeof p.output === 'string' ? p.output : typeof p.output?.content === 'string' ? p.output.content
          : Array.isArray(p.output) ? p.output.map((c: any) => (typeof c?.text === 'string' ? c.text : '')).filter(Boolean).join('\n') : JSON.stringify(p.output ?? null);
        part.output = out;
        const ended = at(l);
        if (ended && part.startedAt && ended >= part.startedAt) part.endedAt = ended;
        const sh = t.shells.find((x) => x.callId === p.call_id);
        if (sh) {
          const r = shellResult(out);
          sh.exitCode = exits.has(sh.callId) ? exits.get(sh.callId)! : r.exitCode;
          sh.running = r.running;
          sh.done = !r.running;
          part.status = r.running ? 'running' : sh.exitCode === 0 ? 'completed' : 'error';
        } else if (mcp.has(String(p.call_id))) part.status = mcp.get(String(p.call_id)) === 'completed' ? 'completed' : 'error';
        else part.status = /^Exit code: 0\b/m.test(out) || !/^Exit code: \d+/m.test(out) ? 'completed' : 'error';
        if (/blocked by PreToolUse hook|aborted by user/.test(out)) part.status = 'error';
        break;
      }
      default: break;
    }
  }
  // Codex's CommandExecution item is the shell's end, also for one that outlived its yield: seen later by a
  // `write_stdin` poll (its exit code), or ended by Codex with the turn (exit code -1).
  for (const sh of t.shells) {
    if (!exits.has(sh.callId)) continue;
    const code = exits.get(sh.callId)!;
    sh.done = true;
    sh.killed = code === null || code < 0;
    sh.exitCode = sh.killed ? null : code;
    const part = tools.get(sh.callId);
    if (part && part.status === 'running') part.status = code === 0 ? 'completed' : 'error';
  }
  if (sawUsage) t.usage = usage;
  return t;
}

/** A correction or retraction to write into the rollout. */
export type RolloutEdit =
  | { kind: 'correct'; at: Locator; text: string }
  | { kind: 'retract'; at: Locator[]; placeholder: string };

/**
 * The rollout with the edits applied to every line that carries the edited text: the `response_item` Codex sends
 * the model on resume, and the `event_msg` copies (the UI's history) so the old text is gone from the file.
 * Answers the text and how many edits found their line.
 */
export function rewriteRollout(text: string, edits: RolloutEdit[]): { text: string; applied: number } {
  const out: string[] = [];
  const hit = new Set<number>();
  const ops = edits.flatMap((e, i) => (e.kind === 'correct' ? [{ i, at: e.at, text: e.text }] : e.at.map((at) => ({ i, at, text: e.placeholder }))));
  let turn: string | null = null;
  /** The turn's last assistant message item: its text is repeated in the turn's `task_complete`. */
  let lastAssistant: string | null = null;
  for (const raw of text.split('\n')) {
    if (!raw.trim()) { out.push(raw); continue; }
    let l: RolloutLine;
    try { l = JSON.parse(raw); } catch { out.push(raw); continue; }
    const p = l?.payload;
    if (!p || typeof p !== 'object') { out.push(raw); continue; }
    if (l.type === 'event_msg' && p.type === 'task_started') { turn = p.turn_id ?? null; lastAssistant = null; }
    if (l.type === 'response_item' && p.type === 'message' && p.role === 'assistant' && typeof p.id === 'string') lastAssistant = p.id;
    let changed = false;
    if (l.type === 'event_msg' && p.type === 'task_complete' && typeof p.last_agent_message === 'string') {
      for (const op of ops) {
        if (op.at.kind === 'text' && op.at.itemId === lastAssistant) { p.last_agent_message = op.text; changed = true; }
      }
    }
    for (const op of ops) {
      if (applyTo(l, p, op.at, op.text, turn)) { changed = true; hit.add(op.i); }
    }
    out.push(changed ? JSON.stringify(l) : raw);
  }
  return { text: out.join('\n'), applied: hit.size };
}

function applyTo(l: RolloutLine, p: any, at: Locator, text: string, turn: string | null): boolean {
  const setContent = (content: any[], type: string) => {
    const i = content.findIndex((c) => typeof c?.text === 'string');
    if (i < 0) return false;
    content.splice(0, content.length, { ...content[i], type: content[i].type ?? type, text });
    return true;
  };
  if (at.kind === 'prompt') {
    const itemTurn = turnOfItem(p) ?? turn;
    if (itemTurn !== at.turnId) return false;
    if (l.type === 'response_item' && p.type === 'message' && p.role === 'user' && Array.isArray(p.content) && isPromptText(textOf(p.content))) return setContent(p.content, 'input_text');
    if (l.type === 'event_msg' && p.type === 'item_completed' && p.item?.type === 'UserMessage' && Array.isArray(p.item.content)) return setContent(p.item.content, 'text');
    if (l.type === 'event_msg' && p.type === 'user_message' && typeof p.message === 'string') { p.message = text; return true; }
    return false;
  }
  if (at.kind === 'text') {
    if (l.type === 'response_item' && p.type === 'message' && p.id === at.itemId && Array.isArray(p.content)) return setContent(p.content, 'output_text');
    if (l.type === 'event_msg' && p.type === 'item_completed' && p.item?.type === 'AgentMessage' && p.item.id === at.itemId && Array.isArray(p.item.content)) return setContent(p.item.content, 'Text');
    return false;
  }
  if (at.kind === 'reasoning') {
    if (l.type === 'response_item' && p.type === 'reasoning' && p.id === at.itemId && Array.isArray(p.summary) && p.summary[at.index]) {
      p.summary[at.index] = { ...p.summary[at.index], text };
      p.encrypted_content = null;
      return true;
    }
    if (l.type === 'event_msg' && p.type === 'item_completed' && p.item?.type === 'Reasoning' && p.item.id === at.itemId && Array.isArray(p.item.summary_text)) {
      p.item.summary_text[at.index] = text;
      return true;
    }
    return false;
  }
  // A tool call's output (what the model read back).
  if (l.type === 'response_item' && (p.type === 'function_call_output' || p.type === 'custom_tool_call_output') && p.call_id === at.callId) { p.output = text; return true; }
  if (l.type === 'event_msg' && p.type === 'item_completed' && p.item?.id === at.callId && typeof p.item.aggregated_output === 'string') { p.item.aggregated_output = text; return true; }
  return false;
}

/**
 * The turn's model calls in the kit's canonical form (bridge/hooks-host/turn.ts): the turn's model for each (Codex
 * uses one model a turn), times the rollout's, no finish reason (the rollout records none per response).
 */
export function modelCallsOf(t: CodexTurn): ModelCall[] {
  return t.calls.map((c) => ({
    externalID: null, providerID: 'openai', modelID: t.model, startedAt: c.startedAt, endedAt: c.endedAt, timesFrom: 'AGENT', finishReason: null,
    usage: { ...c.usage, cacheWrite5mTokens: null, cacheWrite1hTokens: null },
  }));
}
