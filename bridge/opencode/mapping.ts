// Pure parts of the mapping from OpenCode's history to the gateway's model (see NOTES.md / README).
import type { OcMessageInfo, OcPart, OcTokens } from './client.js';

/** One OpenCode message being mirrored; flushed to the gateway as one message once complete. */
export interface PendingMessage {
  role: 'user' | 'assistant';
  parentID?: string;
  parts: Record<string, OcPart>;
  order: string[];
}

/** One agent step: an OpenCode assistant message from its step-start to its step-finish. */
export interface StepState {
  executionID: string | null;
  /** The gateway refused the step (sealed session): OpenCode was told to abort it. */
  refused?: boolean;
  startTree?: string;
  endTree?: string;
  settled?: boolean;
  flushed?: boolean;
  /** What OpenCode recorded about the step (its assistant message and step-finish part). */
  model?: { providerID: string; modelID: string } | null;
  agent?: string | null;
  mode?: string | null;
  usage?: StepUsage | null;
  finish?: string | null;
  /** When OpenCode created the step's assistant message (its model request) and completed it (ms since the epoch). */
  createdAt?: number | null;
  completedAt?: number | null;
}

export interface StepUsage { inputTokens: number | null; outputTokens: number | null; reasoningTokens: number | null; cacheReadTokens: number | null; cacheWriteTokens: number | null; cost: number | null }

/** lost: reported LOST (its end unseen); a later end OpenCode reports still finishes it. */
export interface JobState { jobID: string; finished: boolean; ocMessageID: string; lost?: boolean }

/** Everything the bridge must remember about one OpenCode session between events (stored as JSON). */
export interface SessionState {
  title?: string;
  directory?: string;
  parentOc?: string | null;
  pending: Record<string, PendingMessage>;
  steps: Record<string, StepState>;
  jobs: Record<string, JobState>;
  /** OpenCode messages the bridge itself deleted because of a gateway retraction. */
  deletedByGateway?: string[];
  /** Journal cursor of the gateway session's `sessionEvents` already handled (corrections, retractions). */
  eventsCursor?: string | null;
  eventsSeq?: number;
  /**
   * OpenCode-side edits of mirrored text parts the gateway refused with SessionBusyError (an execution was
   * running): gateway part id -> the correction, retried once the running step settles or the session is idle.
   */
  corrections?: Record<string, PendingCorrection>;
  /** Gateway messages to retract (deleted in OpenCode) that the gateway refused while a step ran: id -> reason. */
  retractions?: Record<string, string>;
  /**
   * Texts the bridge itself PATCHed into OpenCode parts (gateway corrections applied there), per OpenCode part
   * id: OpenCode's `message.part.updated` carrying one of them is the echo, not an edit to mirror back.
   */
  echoes?: Record<string, string[]>;
  /** A seal asked this session to stop: settle its interrupted step with reason SEAL. */
  sealing?: boolean;
  removed?: boolean;
  /** A session the bridge made for its own use (a `generate` completion): never mirrored. */
  hidden?: boolean;
  /** CREATE_SESSION commands already done under this (parent) session: command id -> OpenCode child id. */
  created?: Record<string, string>;
  /**
   * CREATE_SESSION commands under way: command id -> the OpenCode children of this session before the
   * child was created (recorded first), so a command redelivered after a crash finds the child it made.
   */
  creating?: Record<string, string[]>;
  /** OpenCode messages of a compaction the bridge ran for compactSession (its summary): not mirrored as steps. */
  compactionMessages?: string[];
  /** A compactSession is running in OpenCode (summarize): the messages it creates are not mirrored. */
  compacting?: boolean;
  /**
   * PROMPT commands (review comments sent to the agent) given to OpenCode whose user message has not been
   * mirrored yet: command id -> the prompt's text (the user message carrying it is the command's).
   */
  prompting?: Record<string, { text: string }>;
  /** OpenCode user message -> the PROMPT command it carries, until the first step answering it begins (linked to the command). */
  promptOf?: Record<string, string>;
  /** PROMPT commands already given to OpenCode (the last 100): one redelivered after a restart is not prompted twice. */
  prompted?: string[];
}

/** A correction of a mirrored gateway TEXT part, from an edit made in OpenCode. */
export interface PendingCorrection { messageID: string; partID: string; ocPartID: string; text: string }

export function emptyState(): SessionState {
  return { pending: {}, steps: {}, jobs: {} };
}

export interface GatewayPart {
  type: 'TEXT' | 'TOOL' | 'FILE' | 'REASONING'; text?: string; tool?: string; input?: unknown; output?: string | null; status?: string | null; path?: string; mime?: string | null;
  externalID?: string; title?: string | null; metadata?: unknown; startedAt?: string | null; endedAt?: string | null;
}

const iso = (ms: unknown) => (typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : null);
const int = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : null);

/**
 * A step's usage as OpenCode recorded it (step-finish part, else the assistant message), in the gateway's one
 * meaning (domain/executions.ts StepUsage): OpenCode (1.18) subtracts the cache reads and writes from the
 * provider's input tokens and the reasoning tokens from its output tokens (`tokens.input`, `tokens.output`), so
 * they are added back: input tokens with the cached ones, output tokens with the reasoning ones.
 */
export function toUsage(src: { tokens?: OcTokens; cost?: number } | null | undefined): StepUsage | null {
  if (!src || (!src.tokens && src.cost === undefined)) return null;
  const t = src.tokens ?? {};
  const input = int(t.input);
  const output = int(t.output);
  const reasoning = int(t.reasoning);
  const read = int(t.cache?.read);
  const write = int(t.cache?.write);
  return {
    inputTokens: input === null ? null : input + (read ?? 0) + (write ?? 0),
    outputTokens: output === null ? null : output + (reasoning ?? 0), reasoningTokens: reasoning,
    cacheReadTokens: read, cacheWriteTokens: write,
    cost: typeof src.cost === 'number' && Number.isFinite(src.cost) && src.cost >= 0 ? src.cost : null,
  };
}

/** The model, agent and mode of an OpenCode assistant message. */
export function stepFacts(info: OcMessageInfo): Pick<StepState, 'model' | 'agent' | 'mode' | 'createdAt' | 'completedAt'> {
  return {
    model: info.providerID && info.modelID ? { providerID: info.providerID, modelID: info.modelID } : null,
    agent: info.agent ?? null,
    mode: info.mode ?? null,
    createdAt: info.time?.created ?? null,
    completedAt: info.time?.completed ?? null,
  };
}

/**
 * A step's one model call (an OpenCode step is one model request): its model, usage, cost and finish reason,
 * and its times as OpenCode recorded them on the assistant message.
 */
export function stepModelCall(o: { step: string; model: { providerID: string; modelID: string } | null; usage: StepUsage | null; finish: string | null;
  createdAt: number | null; completedAt: number | null }) {
  return {
    externalID: o.step, model: o.model, startedAt: iso(o.createdAt), endedAt: iso(o.completedAt), timesFrom: 'AGENT' as const,
    finishReason: o.finish, usage: o.usage,
  };
}

/** OpenCode parts -> gateway parts (with the OpenCode part ID of each), in order. Structural parts are dropped. */
export function toGatewayParts(m: PendingMessage): { parts: GatewayPart[]; ocPartIDs: string[] } {
  const parts: GatewayPart[] = [];
  const ocPartIDs: string[] = [];
  for (const id of m.order) {
    const p = m.parts[id];
    if (!p) continue;
    const ids = { externalID: p.id };
    if (p.type === 'text' || p.type === 'reasoning') {
      if (!p.text) continue;
      parts.push({ type: p.type === 'text' ? 'TEXT' : 'REASONING', text: p.text, ...ids, startedAt: iso(p.time?.start), endedAt: iso(p.time?.end) });
    } else if (p.type === 'tool' && p.tool) {
      const s = p.state;
      parts.push({
        type: 'TOOL', tool: p.tool, input: s?.input ?? null,
        output: s?.status === 'error' ? (s.error ?? null) : (s?.output ?? null), status: s?.status ?? null,
        ...ids, title: s?.title ? s.title.slice(0, 200) : null, metadata: s?.metadata ?? null,
        startedAt: iso(s?.time?.start), endedAt: iso(s?.time?.end),
      });
    } else if (p.type === 'file') {
      const path = p.filename ?? p.url;
      if (!path) continue;
      parts.push({ type: 'FILE', path, mime: p.mime ?? null, ...ids });
    } else continue;
    ocPartIDs.push(id);
  }
  return { parts, ocPartIDs };
}

/** The terminal state of a shell tool part, as a job end. */
export function jobEnd(p: OcPart): { status: 'COMPLETED' | 'ERROR' | 'CANCELLED'; exitCode: number | null } | null {
  const s = p.state;
  if (!s || (s.status !== 'completed' && s.status !== 'error')) return null;
  const exit = s.metadata?.exit;
  const exitCode = typeof exit === 'number' ? exit : null;
  const aborted = /User aborted the command|aborted/i.test(String(s.output ?? s.error ?? s.metadata?.output ?? ''));
  if (aborted && exitCode === null) return { status: 'CANCELLED', exitCode: null };
  if (s.status === 'error') return { status: 'ERROR', exitCode };
  if (exitCode !== null && exitCode !== 0) return { status: 'ERROR', exitCode };
  return { status: 'COMPLETED', exitCode: exitCode ?? 0 };
}

export const JOB_TOOLS: Record<string, 'SHELL' | 'SUBAGENT'> = { bash: 'SHELL', task: 'SUBAGENT' };

export function baseType(t: string): string {
  return t.replace(/\.\d+$/, '');
}
