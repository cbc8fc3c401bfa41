import { createHash } from 'node:crypto';
import type { Db } from '../db/connection.js';
import { RETRACTION_PLACEHOLDER } from './corrections.js';

/**
 * A settled execution as an OpenTelemetry trace, by the GenAI semantic conventions
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/): what server/otel-export.ts sends.
 *
 * - `invoke_agent <agent>`: the execution (root span, from start to settlement). The session is the
 *   conversation ID; the settlement status is the span status (SUCCEEDED: OK; FAILED, ABANDONED: ERROR;
 *   INTERRUPTED: unset, with the reason as an attribute); usage, model and the changeset's file count and
 *   coverage are attributes.
 * - `chat <model>`: one per model response (an ASSISTANT message of the execution), a child of the root,
 *   from the message's creation (or its first part's start, if earlier) to the end of its last part (else the
 *   next message, else the settlement).
 * - `execute_tool <tool>`: one per tool call (a TOOL part of a model response), a child of the root, with its
 *   name, call ID (the host's, else the part's), duration and error (status `error`: span status ERROR).
 *
 * Content (message text, tool arguments and results, the execution's error text) is exported only when the
 * operator opts in (`content`): it can hold secrets. It is read as the API reads it at export time:
 * corrected text, and a retracted message as the gateway's placeholder.
 *
 * Trace and span IDs are derived from the execution's ID (and the message or part ID), so a trace sent
 * again carries the same IDs: a receiver that deduplicates by span ID keeps one copy.
 */

export interface TraceSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** SpanKind of @opentelemetry/api: 0 INTERNAL, 2 CLIENT. */
  kind: 0 | 2;
  startMs: number;
  endMs: number;
  /** 0 UNSET, 1 OK, 2 ERROR (SpanStatusCode). */
  status: { code: 0 | 1 | 2; message?: string };
  attributes: Record<string, string | number | boolean | string[]>;
}

/** The trace ID (32 hex digits) of an execution: the first 16 bytes of a SHA-256 of its ID. */
export function traceIdOf(executionID: string): string {
  return nonZero(createHash('sha256').update(`agent-history/trace/${executionID}`).digest('hex').slice(0, 32));
}

/** A span ID (16 hex digits) within an execution's trace: `key` is 'execution', or a message or part ID. */
export function spanIdOf(executionID: string, key: string): string {
  return nonZero(createHash('sha256').update(`agent-history/span/${executionID}/${key}`).digest('hex').slice(0, 16));
}

// An all-zero ID is invalid in OTLP; a hash prefix that is all zeros is 2^-64 likely, but never sent.
const nonZero = (hex: string) => (/^0+$/.test(hex) ? hex.slice(0, -1) + '1' : hex);

interface TraceExecutionRow {
  id: string;
  sessionId: string;
  sequence: number;
  hostId: string;
  hostName: string | null;
  status: string;
  trigger: string;
  interruptReason: string | null;
  error: string | null;
  errorName: string | null;
  startedAt: Date;
  settledAt: Date | null;
  providerId: string | null;
  modelId: string | null;
  agent: string | null;
  mode: string | null;
  finishReason: string | null;
  inputTokens: string | null;
  outputTokens: string | null;
  reasoningTokens: string | null;
  cacheReadTokens: string | null;
  cacheWriteTokens: string | null;
  cost: number | null;
  coverage: string | null;
  fileCount: number | null;
  additions: number | null;
  deletions: number | null;
  prunedAt: Date | null;
  parentId: string | null;
}

interface TraceMessageRow {
  id: string;
  sessionId: string;
  executionId: string;
  position: string;
  role: string;
  externalId: string | null;
  createdAt: Date;
  retractedAt: Date | null;
  parts: {
    id: string; index: number; type: string; text: string | null; tool: string | null; input: unknown; output: string | null;
    status: string | null; external_id: string | null; started_at: string | null; ended_at: string | null;
  }[];
}

/** The host kind: the first word of the host's registered name (`opencode …`, `claude-code …`, `reference-host`). */
export const HOST_KIND_SQL = `split_part(h.name, ' ', 1)`;

/**
 * Reads the given settled executions with what their traces need, in two statements (executions with their
 * session, host and changeset; their messages with parts), and builds their spans. Executions no longer
 * stored (a removed session) are left out.
 */
export async function executionTraces(
  db: Db,
  refs: readonly { sessionId: string; executionId: string }[],
  opts: { content: boolean },
): Promise<TraceSpan[][]> {
  if (!refs.length) return [];
  const sessions = refs.map((r) => r.sessionId);
  const ids = refs.map((r) => r.executionId);
  const executions = await db<TraceExecutionRow[]>`
    SELECT e.id, e.session_id, e.sequence, e.host_id, h.name AS host_name, e.status, e.trigger, e.interrupt_reason,
      e.error, e.error_name, e.started_at, e.settled_at, e.provider_id, e.model_id, e.agent, e.mode, e.finish_reason,
      e.input_tokens, e.output_tokens, e.reasoning_tokens, e.cache_read_tokens, e.cache_write_tokens, e.cost,
      c.coverage, c.file_count, c.additions, c.deletions, c.pruned_at, s.parent_id
    FROM executions e
    JOIN sessions s ON s.id = e.session_id
    LEFT JOIN hosts h ON h.id = e.host_id
    LEFT JOIN changesets c ON c.session_id = e.session_id AND c.execution_id = e.id
    WHERE (e.session_id, e.id) IN (SELECT * FROM unnest(${sessions}::text[], ${ids}::text[]))
      AND e.settled_at IS NOT NULL`;
  if (!executions.length) return [];
  // A join grouped by the message (its session first): on a Citus cluster the whole statement runs on the shards.
  const messages = await db<TraceMessageRow[]>`
    SELECT m.id, m.session_id, m.execution_id, m.position, m.role, m.external_id, m.created_at, m.retracted_at,
      coalesce(json_agg(json_build_object('id', p.id, 'index', p.index, 'type', p.type, 'text', p.text,
          'tool', p.tool, 'input', p.input, 'output', p.output, 'status', p.status, 'external_id', p.external_id,
          'started_at', p.started_at, 'ended_at', p.ended_at) ORDER BY p.index) FILTER (WHERE p.id IS NOT NULL), '[]'::json) AS parts
    FROM messages m
    LEFT JOIN parts p ON p.session_id = m.session_id AND p.message_id = m.id
    WHERE (m.session_id, m.execution_id) IN (SELECT * FROM unnest(${executions.map((e) => e.sessionId)}::text[], ${executions.map((e) => e.id)}::text[]))
    GROUP BY m.session_id, m.id
    ORDER BY m.session_id, m.position`;
  const byExecution = new Map<string, TraceMessageRow[]>();
  for (const m of messages) {
    const list = byExecution.get(m.executionId) ?? [];
    list.push(m);
    byExecution.set(m.executionId, list);
  }
  const order = new Map(ids.map((id, i) => [id, i]));
  return executions
    .sort((a, b) => order.get(a.id)! - order.get(b.id)!)
    .map((e) => spansOf(e, byExecution.get(e.id) ?? [], opts));
}

const int = (v: string | number | null) => (v == null ? undefined : Number(v));
const time = (v: Date | string | null | undefined) => (v == null ? undefined : new Date(v).getTime());

function spansOf(e: TraceExecutionRow, messages: TraceMessageRow[], opts: { content: boolean }): TraceSpan[] {
  const traceId = traceIdOf(e.id);
  const rootId = spanIdOf(e.id, 'execution');
  const start = e.startedAt.getTime();
  const end = Math.max(start, e.settledAt!.getTime());
  const hostKind = e.hostName ? e.hostName.split(' ')[0] : undefined;
  const agentName = e.agent ?? hostKind ?? 'agent';
  const attrs = (o: Record<string, string | number | boolean | string[] | undefined | null>) => {
    const out: TraceSpan['attributes'] = {};
    for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null) out[k] = v;
    return out;
  };
  const model = {
    'gen_ai.provider.name': e.providerId,
    'gen_ai.request.model': e.modelId,
  };
  const usage = {
    'gen_ai.usage.input_tokens': int(e.inputTokens),
    'gen_ai.usage.output_tokens': int(e.outputTokens),
    'gen_ai.usage.cache_read.input_tokens': int(e.cacheReadTokens),
    'gen_ai.usage.cache_creation.input_tokens': int(e.cacheWriteTokens),
    'agent_history.usage.reasoning_tokens': int(e.reasoningTokens),
    'agent_history.usage.cost': e.cost ?? undefined,
  };
  const failed = e.status === 'FAILED' || e.status === 'ABANDONED';
  const root: TraceSpan = {
    traceId, spanId: rootId, parentSpanId: null, name: `invoke_agent ${agentName}`, kind: 0, startMs: start, endMs: end,
    status: e.status === 'SUCCEEDED' ? { code: 1 }
      : failed ? { code: 2, message: opts.content && e.error ? `${e.status}: ${e.error}` : e.status }
        : { code: 0 },
    attributes: attrs({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': agentName,
      'gen_ai.conversation.id': e.sessionId,
      ...model,
      'gen_ai.response.model': e.modelId,
      'gen_ai.response.finish_reasons': e.finishReason ? [e.finishReason] : undefined,
      ...usage,
      'error.type': failed ? (e.errorName ?? e.status) : undefined,
      'agent_history.execution.id': e.id,
      'agent_history.execution.sequence': e.sequence,
      'agent_history.execution.status': e.status,
      'agent_history.execution.trigger': e.trigger,
      'agent_history.execution.interrupt_reason': e.interruptReason,
      'agent_history.execution.mode': e.mode,
      'agent_history.session.parent_id': e.parentId,
      'agent_history.host.id': e.hostId,
      'agent_history.host.kind': hostKind,
      'agent_history.changeset.coverage': e.coverage == null ? undefined : e.prunedAt ? 'EXPIRED' : e.coverage,
      'agent_history.changeset.file_count': e.fileCount ?? undefined,
      'agent_history.changeset.additions': e.additions ?? undefined,
      'agent_history.changeset.deletions': e.deletions ?? undefined,
    }),
  };
  const spans = [root];
  const responses = messages.filter((m) => m.role === 'ASSISTANT');
  const clamp = (t: number) => Math.min(Math.max(t, start), end);
  for (const [i, m] of messages.entries()) {
    if (m.role !== 'ASSISTANT') continue;
    // A host may record the response after its parts ran (their own times are earlier): it starts at the first.
    const partStarts = m.parts.map((p) => time(p.started_at)).filter((t): t is number => t !== undefined);
    const mStart = clamp(Math.min(m.createdAt.getTime(), ...partStarts));
    const partEnds = m.parts.map((p) => time(p.ended_at)).filter((t): t is number => t !== undefined);
    const next = messages[i + 1];
    const mEnd = clamp(partEnds.length ? Math.max(...partEnds) : next ? next.createdAt.getTime() : end);
    const last = responses[responses.length - 1] === m;
    const retracted = m.retractedAt !== null;
    const chatAttrs: Record<string, string | number | boolean | string[] | undefined | null> = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.conversation.id': e.sessionId,
      ...model,
      'gen_ai.response.model': e.modelId,
      'gen_ai.response.id': m.externalId ?? m.id,
      'gen_ai.response.finish_reasons': last && e.finishReason ? [e.finishReason] : undefined,
      // The host reports usage per execution: a response carries it when it is the execution's only one.
      ...(responses.length === 1 ? usage : {}),
      'agent_history.message.id': m.id,
      'agent_history.message.retracted': retracted || undefined,
    };
    if (opts.content) {
      const earlier = messages.slice(0, i).filter((x) => x.role !== 'ASSISTANT');
      chatAttrs['gen_ai.input.messages'] = JSON.stringify(earlier.map((x) => contentMessage(x)));
      chatAttrs['gen_ai.output.messages'] = JSON.stringify([{ ...contentMessage(m), ...(last && e.finishReason ? { finish_reason: e.finishReason } : {}) }]);
    }
    spans.push({
      traceId, spanId: spanIdOf(e.id, m.id), parentSpanId: rootId, name: e.modelId ? `chat ${e.modelId}` : 'chat', kind: 2,
      startMs: mStart, endMs: Math.max(mStart, mEnd), status: { code: 0 }, attributes: attrs(chatAttrs),
    });
    for (const p of m.parts) {
      if (p.type !== 'TOOL' || !p.tool) continue;
      const tStart = clamp(time(p.started_at) ?? mStart);
      const tEnd = clamp(time(p.ended_at) ?? tStart);
      const error = isToolError(p.status);
      spans.push({
        traceId, spanId: spanIdOf(e.id, p.id), parentSpanId: rootId, name: `execute_tool ${p.tool}`, kind: 0,
        startMs: tStart, endMs: Math.max(tStart, tEnd),
        status: error ? { code: 2, message: 'tool call failed' } : { code: 0 },
        attributes: attrs({
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.conversation.id': e.sessionId,
          'gen_ai.tool.name': p.tool,
          'gen_ai.tool.type': 'function',
          'gen_ai.tool.call.id': p.external_id ?? p.id,
          'error.type': error ? 'tool_error' : undefined,
          'agent_history.tool.status': p.status,
          'agent_history.part.id': p.id,
          'gen_ai.tool.call.arguments': opts.content && !retracted && p.input != null ? JSON.stringify(p.input) : undefined,
          'gen_ai.tool.call.result': opts.content && !retracted ? p.output : undefined,
        }),
      });
    }
  }
  return spans;
}

/** A tool part's status that means the call failed (OpenCode and Claude Code write `error`). */
export function isToolError(status: string | null): boolean {
  return status != null && ['error', 'failed'].includes(status.toLowerCase());
}

/** A message as the GenAI conventions' message JSON: corrected text, the placeholder for a retracted one. */
function contentMessage(m: TraceMessageRow) {
  const role = m.role.toLowerCase();
  if (m.retractedAt) return { role, parts: [{ type: 'text', content: RETRACTION_PLACEHOLDER }] };
  const parts = m.parts.flatMap((p): Record<string, unknown>[] => {
    if (p.type === 'TEXT') return [{ type: 'text', content: p.text ?? '' }];
    if (p.type === 'REASONING') return [{ type: 'reasoning', content: p.text ?? '' }];
    if (p.type === 'TOOL') return [{ type: 'tool_call', id: p.external_id ?? p.id, name: p.tool, arguments: p.input }];
    return [];
  });
  return { role, parts };
}
