// Claude Code's session transcript ($CLAUDE_CONFIG_DIR or ~/.claude/projects/<slug>/<session id>.jsonl), read
// defensively. The format is undocumented and changes between versions (verified against 2.1.332): one JSON
// object per line; `type` "user" / "assistant" lines carry `message` (the Messages API message), `uuid`,
// `parentUuid`, `isSidechain`, `timestamp`; a prompt's user line and its tool results carry `promptId` (the
// hook input's `prompt_id`); an assistant message is written as one line per content block, all with the same
// `message.id`, `model`, `usage` and `stop_reason`. Every other line type (attachments, queue operations,
// api-request blobs, summaries, cost state…) is skipped, and so is a line that is not JSON (a torn tail
// while Claude Code appends): nothing here throws on content. What the transcript does not give is left
// null, never invented.

import { rewriteFileAtomically as rewriteAtomically } from '../hooks-host/atomic-rewrite.js';
import type { JobEnd } from '../hooks-host/hooks-host.js';
import type { ModelCall } from '../hooks-host/turn.js';

export interface TranscriptLine {
  type: string;
  uuid?: string;
  parentUuid?: string | null;
  promptId?: string;
  isSidechain?: boolean;
  timestamp?: string;
  message?: { id?: string; role?: string; model?: string; content?: unknown; usage?: Record<string, unknown>; stop_reason?: string | null };
  toolUseResult?: unknown;
  [k: string]: unknown;
}

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const maybeText = (v: unknown) => (typeof v === 'string' ? v : undefined);

/**
 * A transcript line checked at the boundary: a JSON object with a string `type`, its fields the reader relies on
 * kept only when they have their type (a field of another type reads as absent; the others come as they were).
 */
export function transcriptLine(o: unknown): TranscriptLine | null {
  if (!isRecord(o) || typeof o.type !== 'string') return null;
  const m = isRecord(o.message) ? o.message : null;
  return {
    ...o, type: o.type, uuid: maybeText(o.uuid), parentUuid: o.parentUuid === null ? null : maybeText(o.parentUuid), promptId: maybeText(o.promptId),
    isSidechain: typeof o.isSidechain === 'boolean' ? o.isSidechain : undefined, timestamp: maybeText(o.timestamp),
    message: m ? {
      ...m, id: maybeText(m.id), role: maybeText(m.role), model: maybeText(m.model), content: m.content, usage: isRecord(m.usage) ? m.usage : undefined,
      stop_reason: m.stop_reason === null ? null : maybeText(m.stop_reason),
    } : undefined,
  };
}

/** Parses transcript text: the lines that are transcript lines (transcriptLine); the rest is counted as skipped. */
export function parseTranscript(text: string): { lines: TranscriptLine[]; skipped: number } {
  const lines: TranscriptLine[] = [];
  let skipped = 0;
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    let l: TranscriptLine | null = null;
    try { l = transcriptLine(JSON.parse(raw)); } catch { /* not JSON (a torn tail) */ }
    if (l) lines.push(l); else skipped++;
  }
  return { lines, skipped };
}

export interface PartInputLike {
  type: 'TEXT' | 'REASONING' | 'TOOL';
  text?: string;
  tool?: string;
  input?: unknown;
  output?: string | null;
  status?: string;
  externalID?: string;
  metadata?: Record<string, unknown>;
  /** A tool call's start and end as the transcript has them: its tool_use line's time, its result line's. */
  startedAt?: string;
  endedAt?: string;
}

/**
 * A model response's usage in the gateway's one meaning (domain/executions.ts StepUsage): input tokens include
 * the cached ones. Anthropic's `input_tokens` does not count them, so the cache reads and writes are added.
 * The writes of each cache lifetime (`cache_creation.ephemeral_5m_input_tokens` / `_1h_`) are given only when
 * they account for every write (else null: the transcript does not say which).
 */
export interface Usage {
  inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number;
  cacheWrite5mTokens: number | null; cacheWrite1hTokens: number | null;
}

/**
 * One model response (one request of the agent loop): an assistant message. `startedAt`: when Claude Code sent
 * its request (the `api-request` line its lines' `requestRef` names); `endedAt`: its last line's time.
 */
export interface Step {
  messageID: string;
  model: string | null;
  stopReason: string | null;
  usage: Usage | null;
  parts: PartInputLike[];
  startedAt: string | null;
  endedAt: string | null;
}

export interface Turn {
  /** The prompt's text as the transcript has it (null: its line is not there yet). */
  prompt: string | null;
  steps: Step[];
  /** The last step's model and stop reason; usage summed over the steps that reported one. */
  model: string | null;
  finishReason: string | null;
  usage: Usage | null;
  /** The text of the last assistant message (what the Stop hook calls `last_assistant_message`). */
  lastText: string | null;
  /**
   * The Messages API's failure that ended the turn, as Claude Code records it: an assistant line with
   * `isApiErrorMessage` (model "<synthetic>", its text "API Error: …", `apiErrorStatus`, `apiErrorType`),
   * written after its retries gave up. Not a model step: no message, model or usage of the model comes from it.
   */
  apiError: { status: number | null; type: string | null; text: string } | null;
  /**
   * Files the prompt attached: `@path` mentions (attachment lines of type "file": the absolute path Claude Code
   * read, an image's MIME type; a text file's type is not given, so null) and pasted images (image blocks of
   * the prompt, with the path Claude Code saved each to, from its "[Image: source: …]" line; an image without
   * such a line has no path and is left out).
   */
  files: { path: string; mime: string | null }[];
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.round(v)) : 0);

export function usageOf(u: unknown): Usage | null {
  if (!u || typeof u !== 'object') return null;
  const x = u as Record<string, unknown>;
  const read = num(x.cache_read_input_tokens);
  const write = num(x.cache_creation_input_tokens);
  const c = x.cache_creation && typeof x.cache_creation === 'object' ? x.cache_creation as Record<string, unknown> : {};
  const w5 = num(c.ephemeral_5m_input_tokens);
  const w1 = num(c.ephemeral_1h_input_tokens);
  const split = w5 + w1 === write && (write > 0 || 'ephemeral_5m_input_tokens' in c);
  return {
    inputTokens: num(x.input_tokens) + read + write, outputTokens: num(x.output_tokens), cacheReadTokens: read, cacheWriteTokens: write,
    cacheWrite5mTokens: split ? w5 : null, cacheWrite1hTokens: split ? w1 : null,
  };
}

/** Usages summed; a lifetime's writes only when every usage says it. */
export function addUsage(a: Usage, u: Usage): Usage {
  return {
    inputTokens: a.inputTokens + u.inputTokens, outputTokens: a.outputTokens + u.outputTokens,
    cacheReadTokens: a.cacheReadTokens + u.cacheReadTokens, cacheWriteTokens: a.cacheWriteTokens + u.cacheWriteTokens,
    cacheWrite5mTokens: a.cacheWrite5mTokens === null || u.cacheWrite5mTokens === null ? null : a.cacheWrite5mTokens + u.cacheWrite5mTokens,
    cacheWrite1hTokens: a.cacheWrite1hTokens === null || u.cacheWrite1hTokens === null ? null : a.cacheWrite1hTokens + u.cacheWrite1hTokens,
  };
}

function blocks(content: unknown): any[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter((b) => b && typeof b === 'object') : [];
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  return blocks(content).map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : b.type ? `[${b.type}]` : '')).join('\n');
}

/**
 * Whether a user line is a prompt (text the user typed), not tool results. `sidechain`: of a subagent's own
 * transcript (`<session>/subagents/agent-<id>.jsonl`, every line `isSidechain`), whose prompt is its task.
 */
export function isPrompt(l: TranscriptLine, sidechain = false): boolean {
  if (l.type !== 'user' || !!l.isSidechain !== sidechain || !l.message) return false;
  const c = l.message.content;
  if (typeof c === 'string') return true;
  const b = blocks(c);
  return b.length > 0 && !b.some((x) => x.type === 'tool_result') && b.some((x) => x.type === 'text');
}

/**
 * The prompt IDs of the transcript's turns that the model answered, in order, without Claude Code's own: a
 * compaction (its summary line, `isCompactSummary`, carries the promptId of the `/compact` that made it) and a
 * local command's lines (`/cost`, `/compact`…: meta caveats, `<command-name>`, `<local-command-…>`).
 */
export function turnIdsOf(lines: TranscriptLine[]): string[] {
  const ids = new Set<string>();
  const own = new Set<string>();
  const answered = new Set<string>();
  const local = (l: TranscriptLine) => l.isMeta === true || /^\s*<(command-name|command-message|local-command-)/.test(promptText(l));
  let current: string | null = null;
  for (const l of lines) {
    if (l.type === 'assistant' && !l.isSidechain && current) answered.add(current);
    if (!isPrompt(l) || typeof l.promptId !== 'string') continue;
    current = l.promptId;
    if (l.isCompactSummary === true) own.add(l.promptId);
    else if (!local(l)) ids.add(l.promptId);
  }
  return [...ids].filter((id) => !own.has(id) && answered.has(id));
}

export function promptText(l: TranscriptLine): string {
  return blocks(l.message?.content).filter((b) => b.type === 'text' && typeof b.text === 'string').map((b) => b.text).join('\n');
}

/**
 * The turn of prompt `promptId`: from its prompt line to the next prompt of another promptId. Subagent
 * (sidechain) lines are skipped, or, with `sidechain` (a subagent's own transcript), only they are read.
 * Tool results are joined to their tool call's part (output, status).
 */
export function turnOf(lines: TranscriptLine[], promptId: string, sidechain = false): Turn {
  const start = lines.findIndex((l) => isPrompt(l, sidechain) && l.promptId === promptId);
  const turn: Turn = { prompt: null, steps: [], model: null, finishReason: null, usage: null, lastText: null, apiError: null, files: [] };
  if (start < 0) return turn;
  turn.prompt = promptText(lines[start]);
  const pasted = blocks(lines[start].message?.content).filter((b) => b.type === 'image');
  const pastedPaths: string[] = [];
  for (let i = start + 1; i < lines.length && lines[i].type !== 'assistant'; i++) {
    const l = lines[i];
    if (!!l.isSidechain !== sidechain) continue;
    const a = l.attachment as any;
    if (l.type === 'attachment' && a && a.type === 'file' && typeof a.filename === 'string' && a.filename) {
      turn.files.push({ path: a.filename, mime: a.content?.type === 'image' && typeof a.content?.file?.type === 'string' ? a.content.file.type : null });
    } else if (l.type === 'user' && l.isMeta === true) {
      for (const b of blocks(l.message?.content)) {
        const m = b.type === 'text' && typeof b.text === 'string' ? /^\[Image: source: (.+)\]$/.exec(b.text.trim()) : null;
        if (m) pastedPaths.push(m[1]);
      }
    }
  }
  pasted.forEach((b, i) => {
    if (pastedPaths[i]) turn.files.push({ path: pastedPaths[i], mime: typeof b.source?.media_type === 'string' ? b.source.media_type : null });
  });
  const byID = new Map<string, Step>();
  const tools = new Map<string, PartInputLike>();
  /** Claude Code's record of each request it sent: api-request id -> when. */
  const requests = new Map<string, string>();
  for (let i = start + 1; i < lines.length; i++) {
    const l = lines[i];
    if (l.type === 'api-request' && typeof l.id === 'string' && typeof l.timestamp === 'string') { requests.set(l.id, l.timestamp); continue; }
    if (!!l.isSidechain !== sidechain) continue;
    if (isPrompt(l, sidechain) && l.promptId !== promptId) break;
    const m = l.message;
    if (!m) continue;
    if (l.type === 'assistant' && l.isApiErrorMessage === true) {
      const text = blocks(m.content).filter((b) => b.type === 'text' && typeof b.text === 'string').map((b) => b.text).join('\n');
      turn.apiError = { status: typeof l.apiErrorStatus === 'number' ? l.apiErrorStatus : null, type: typeof l.apiErrorType === 'string' ? l.apiErrorType : null, text };
      continue;
    }
    if (l.type === 'assistant') {
      turn.apiError = null; // a later model answer: the failure was retried past
      const id = typeof m.id === 'string' ? m.id : `line:${l.uuid ?? i}`;
      let s = byID.get(id);
      if (!s) {
        s = { messageID: id, model: typeof m.model === 'string' ? m.model : null, stopReason: null, usage: null, parts: [],
          startedAt: typeof l.requestRef === 'string' ? requests.get(l.requestRef) ?? null : null, endedAt: null };
        byID.set(id, s);
        turn.steps.push(s);
      }
      if (typeof l.timestamp === 'string') s.endedAt = l.timestamp;
      if (typeof m.stop_reason === 'string') s.stopReason = m.stop_reason;
      s.usage = usageOf(m.usage) ?? s.usage;
      for (const b of blocks(m.content)) {
        if (b.type === 'text' && typeof b.text === 'string' && b.text.length) s.parts.push({ type: 'TEXT', text: b.text });
        else if (b.type === 'thinking' && typeof b.thinking === 'string' && b.thinking.length) s.parts.push({ type: 'REASONING', text: b.thinking });
        else if (b.type === 'tool_use' && typeof b.name === 'string') {
          const p: PartInputLike = { type: 'TOOL', tool: b.name, input: b.input ?? null, output: null, status: 'running', ...(typeof b.id === 'string' ? { externalID: b.id } : {}),
            ...(l.timestamp ? { startedAt: l.timestamp } : {}) };
          s.parts.push(p);
          if (typeof b.id === 'string') tools.set(b.id, p);
        }
        // redacted_thinking, server tool blocks, unknown blocks: skipped (no content the API can show).
      }
    } else if (l.type === 'user') {
      for (const b of blocks(m.content)) {
        if (b.type !== 'tool_result' || typeof b.tool_use_id !== 'string') continue;
        const p = tools.get(b.tool_use_id);
        if (!p) continue;
        p.output = resultText(b.content);
        p.status = b.is_error ? 'error' : 'completed';
        if (l.timestamp && p.startedAt && l.timestamp >= p.startedAt) p.endedAt = l.timestamp;
      }
    }
  }
  const last = turn.steps.at(-1);
  if (last) {
    turn.model = last.model;
    turn.finishReason = last.stopReason;
    const texts = last.parts.filter((p) => p.type === 'TEXT').map((p) => p.text!);
    turn.lastText = texts.length ? texts.join('\n') : null;
  }
  const reported = turn.steps.map((s) => s.usage).filter((u): u is Usage => !!u);
  if (reported.length) turn.usage = reported.reduce(addUsage);
  return turn;
}

/** The turn's model calls in the kit's canonical form (bridge/hooks-host/turn.ts): one per model response, times the transcript's. */
export function modelCallsOf(t: Turn): ModelCall[] {
  return t.steps.map((s) => ({
    externalID: s.messageID.startsWith('line:') ? null : s.messageID, providerID: 'anthropic', modelID: s.model,
    startedAt: s.startedAt, endedAt: s.endedAt, timesFrom: 'AGENT', finishReason: s.stopReason,
    // Anthropic's usage does not count the thinking tokens apart (they are in the output tokens).
    usage: s.usage && { ...s.usage, reasoningTokens: null },
  }));
}

// ---- Shells' ends (Bash tool results, background task notifications) ----

/** The end of a foreground Bash call from its tool result (Claude Code writes "Exit code N" for a failure). */
export function shellEnd(output: string | null | undefined, status: string | undefined): JobEnd | null {
  if (status === 'completed') return { status: 'COMPLETED', exitCode: 0 };
  if (status !== 'error') return null;
  const m = /Exit code (\d+)/.exec(output ?? '');
  return m ? { status: 'ERROR', exitCode: Number(m[1]) } : { status: 'ERROR', exitCode: null };
}

/** A background task's end from Claude Code's `<task-notification>` prompt. */
export function taskNotification(text: string): { toolUseId: string | null; taskId: string | null; end: JobEnd } | null {
  if (!text.trimStart().startsWith('<task-notification>')) return null;
  const tag = (t: string) => new RegExp(`<${t}>([^<]*)</${t}>`).exec(text)?.[1]?.trim() ?? null;
  const status = tag('status');
  const code = /exit code (\d+)/i.exec(text);
  const exitCode = code ? Number(code[1]) : null;
  const end: JobEnd = status === 'completed' ? { status: exitCode ? 'ERROR' : 'COMPLETED', exitCode: exitCode ?? 0 }
    : status === 'killed' || status === 'stopped' ? { status: 'CANCELLED', exitCode }
      : { status: 'ERROR', exitCode };
  return { toolUseId: tag('tool-use-id'), taskId: tag('task-id'), end };
}

// ---- Rewriting (corrections and retractions) ----

/** Which transcript message a gateway message mirrors: a prompt (by promptId) or a model response (by message.id). */
export type MessageKey = { prompt: string } | { step: string };

export type TranscriptEdit =
  | { kind: 'correct'; key: MessageKey; partIndex: number; text: string }
  | { kind: 'retract'; key: MessageKey; placeholder: string };

const MIN_SCRUB = 8;

function replaceStrings(v: unknown, from: string, to: string): { v: unknown; n: number } {
  if (typeof v === 'string') return v.includes(from) ? { v: v.split(from).join(to), n: 1 } : { v, n: 0 };
  if (Array.isArray(v)) {
    let n = 0;
    const out = v.map((x) => { const r = replaceStrings(x, from, to); n += r.n; return r.v; });
    return { v: n ? out : v, n };
  }
  if (v && typeof v === 'object') {
    let n = 0;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) { const r = replaceStrings(x, from, to); n += r.n; out[k] = r.v; }
    return { v: n ? out : v, n };
  }
  return { v, n: 0 };
}

function stringsOf(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) v.forEach((x) => stringsOf(x, out));
  else if (v && typeof v === 'object') Object.values(v).forEach((x) => stringsOf(x, out));
  return out;
}

/**
 * Applies edits to transcript text: the edited message's own lines are changed in place (same uuid, same
 * parent chain, so Claude Code's `--resume` reads the same conversation with the new content), and every
 * other line that repeats the old content (Claude Code keeps copies: request blobs, the last prompt, queue
 * operations) gets it replaced too, so no copy of a corrected or retracted text is left in the file. Lines
 * not touched keep their bytes. Parts are counted as `turnOf` counts them (non-empty text, thinking, tool use).
 * A retraction turns the message's text and thinking blocks into the placeholder text, empties its tool
 * calls' inputs and replaces their results by the placeholder. Answers the new text and how many edits found
 * their message (an edit whose message or part the transcript does not have changes nothing).
 */
export function rewriteTranscript(text: string, edits: TranscriptEdit[], sidechain = false): { text: string; applied: number } {
  const raw = text.split('\n');
  const parsed: (TranscriptLine | null)[] = raw.map((r) => { try { const o = JSON.parse(r); return o && typeof o === 'object' && !Array.isArray(o) ? o : null; } catch { return null; } });
  const changed = new Set<number>();
  let applied = 0;
  const scrub: [string, string][] = [];
  for (const e of edits) {
    const idx: number[] = [];
    parsed.forEach((l, i) => {
      if (!l || !!l.isSidechain !== sidechain) return;
      if ('prompt' in e.key ? isPrompt(l, sidechain) && l.promptId === e.key.prompt : l.type === 'assistant' && l.message?.id === e.key.step) idx.push(i);
    });
    if (!idx.length) continue;
    if ('prompt' in e.key) {
      const l = parsed[idx[0]]!;
      const old = promptText(l);
      const to = e.kind === 'correct' ? e.text : e.placeholder;
      if (e.kind === 'correct' && e.partIndex !== 0) continue;
      l.message = { ...l.message!, content: typeof l.message!.content === 'string' ? to : [{ type: 'text', text: to }] };
      changed.add(idx[0]);
      if (old.length >= MIN_SCRUB) scrub.push([old, to]);
      applied++;
      continue;
    }
    let part = 0;
    let hit = false;
    const toolIDs: string[] = [];
    for (const i of idx) {
      const l = parsed[i]!;
      const content = Array.isArray(l.message?.content) ? [...(l.message!.content as any[])] : typeof l.message?.content === 'string' ? [{ type: 'text', text: l.message!.content }] : [];
      let lineChanged = false;
      content.forEach((b, bi) => {
        if (!b || typeof b !== 'object') return;
        const counted = (b.type === 'text' && typeof b.text === 'string' && b.text.length) || (b.type === 'thinking' && typeof b.thinking === 'string' && b.thinking.length)
          || (b.type === 'tool_use' && typeof b.name === 'string');
        if (!counted) return;
        const here = part++;
        if (e.kind === 'correct') {
          if (here !== e.partIndex || b.type !== 'text') return;
          if (b.text.length >= MIN_SCRUB) scrub.push([b.text, e.text]);
          content[bi] = { ...b, text: e.text };
          lineChanged = hit = true;
        } else {
          if (b.type === 'tool_use') {
            if (typeof b.id === 'string') toolIDs.push(b.id);
            for (const s of stringsOf(b.input)) if (s.length >= MIN_SCRUB) scrub.push([s, e.placeholder]);
            content[bi] = { ...b, input: {} };
          } else {
            const old = b.type === 'text' ? b.text : b.thinking;
            if (old.length >= MIN_SCRUB) scrub.push([old, e.placeholder]);
            content[bi] = { type: 'text', text: e.placeholder };
          }
          lineChanged = hit = true;
        }
      });
      if (lineChanged) { l.message = { ...l.message!, content }; changed.add(i); }
    }
    if (e.kind === 'retract' && toolIDs.length) {
      parsed.forEach((l, i) => {
        if (!l || l.type !== 'user' || !Array.isArray(l.message?.content)) return;
        let c = false;
        const content = (l.message!.content as any[]).map((b) => {
          if (b?.type !== 'tool_result' || !toolIDs.includes(b.tool_use_id)) return b;
          for (const s of stringsOf(b.content)) if (s.length >= MIN_SCRUB) scrub.push([s, e.placeholder]);
          c = true;
          return { ...b, content: e.placeholder };
        });
        if (c) { l.message = { ...l.message!, content }; if ('toolUseResult' in l) l.toolUseResult = e.placeholder; changed.add(i); }
      });
    }
    if (hit) applied++;
  }
  // Every other copy of an old content, anywhere in the file; also as Claude Code abbreviates it (whitespace
  // collapsed: the `last-prompt` lines), and a truncated copy (a prefix of 40+ characters) replaced whole.
  for (const [from, to] of [...scrub]) {
    const flat = from.replace(/\s+/g, ' ').trim();
    if (flat !== from && flat.length >= MIN_SCRUB) scrub.push([flat, to.replace(/\s+/g, ' ').trim()]);
  }
  parsed.forEach((l, i) => {
    if (!l || l.type !== 'last-prompt' || typeof l.lastPrompt !== 'string') return;
    const lp = (l.lastPrompt as string).replace(/[…]$|\.\.\.$/, '');
    const hit = scrub.find(([from]) => lp.length >= 40 && from.replace(/\s+/g, ' ').startsWith(lp) && lp !== from);
    if (hit) { parsed[i] = { ...l, lastPrompt: hit[1].replace(/\s+/g, ' ').trim() }; changed.add(i); }
  });
  if (scrub.length) {
    parsed.forEach((l, i) => {
      if (!l) return;
      let v: unknown = l;
      let n = 0;
      for (const [from, to] of scrub) { const r = replaceStrings(v, from, to); v = r.v; n += r.n; }
      if (n) { parsed[i] = v as TranscriptLine; changed.add(i); }
    });
  }
  const out = raw.map((r, i) => (changed.has(i) ? JSON.stringify(parsed[i]) : r));
  return { text: out.join('\n'), applied };
}

/**
 * Rewrites a transcript atomically (the kit's rewrite, bridge/hooks-host/atomic-rewrite.ts), only while no
 * Claude Code process of the session runs (`applyEdits`).
 */
export function rewriteFileAtomically(file: string, edits: TranscriptEdit[], sidechain = false): number {
  return rewriteAtomically(file, (text) => rewriteTranscript(text, edits, sidechain));
}
