// The turn every agent's host reports, in one meaning (issue 59): an agent's host parses its own formats (its
// transcript, rollout or chat history) into these, and the kit turns them into what the gateway records. Every
// number has the meaning of the gateway's usage (docs/CONTRACT.md section 1a; domain/executions.ts StepUsage):
// input tokens include the cached ones (cache reads and writes beside them, the writes of each cache lifetime
// where the agent says), output tokens include the reasoning ones; a cost is the agent's own, never estimated.
// Times are ISO 8601 instants as the agent recorded them (`timesFrom: 'AGENT'`) or, where it did not, as the
// host observed them ('HOST'); a time neither knows is null.

import fs from 'node:fs';
import type { SettleExecutionInput } from '../../client/index.js';
import type { EndWhy, JobEnd } from './hooks-host.js';

/** What the kit keeps of every turn (each agent's state adds its own: its turn ID's name, a cost…). */
export interface KitTurnState { executionID: string; settled: boolean }

/** How a turn ended: the agent's end-of-turn hook (its input), or why it ended without one. */
export type TurnEnd = { stop: Record<string, unknown> } | { why: EndWhy };

/** What a turn's settlement says besides its execution (the kit adds the end boundary). */
export type TurnSettlement = Omit<SettleExecutionInput, 'executionID'>;

/**
 * The interrupt reason of a turn that ended without its end-of-turn hook: the seal's (its fence, or its stop),
 * a new prompt's, a crash's or an error exit's (SHUTDOWN), else the user's.
 */
export function interruptReasonOf(fenced: boolean, why: EndWhy): 'SEAL' | 'SUPERSEDED' | 'SHUTDOWN' | 'USER' {
  return fenced || why === 'seal' ? 'SEAL' : why === 'superseded' ? 'SUPERSEDED' : why === 'failed' || why === 'crashed' ? 'SHUTDOWN' : 'USER';
}

/**
 * How the unfinished jobs of a turn end with it, when nothing reported their end: the seal cancelled them; a new
 * prompt leaves them running (null); otherwise (the agent exited) nobody saw them end: LOST.
 */
export function jobEndWhenTurnEnds(why: EndWhy): JobEnd | null {
  return why === 'seal' ? { status: 'CANCELLED', exitCode: null } : why === 'superseded' ? null : { status: 'LOST', exitCode: null };
}

/**
 * The agent's turn as `read` parses it from `file`, read again until `done` says its end is written (an agent
 * writes its file asynchronously: the end-of-turn hook may come before the lines) or `waitMs` passed; woken by
 * the file changing, or after 100 ms.
 */
export async function readTurnUntil<T>(file: string, read: () => T, done: (t: T) => boolean, waitMs: number): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const t = read();
    if (done(t) || Date.now() >= deadline) return t;
    await new Promise<void>((r) => {
      let w: fs.FSWatcher | null = null;
      const timer = setTimeout(() => { w?.close(); r(); }, 100);
      try { w = fs.watch(file, () => { clearTimeout(timer); w?.close(); r(); }); } catch { /* not there */ }
    });
  }
}

/** Tokens of one model call or a sum of them, in the one meaning; a count the agent does not give is null. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number | null;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  cacheWrite5mTokens: number | null;
  cacheWrite1hTokens: number | null;
}

/** One request the agent made to a model within the turn. */
export interface ModelCall {
  /** The agent's own ID of the response (Claude Code: its message ID). */
  externalID: string | null;
  providerID: string;
  modelID: string | null;
  startedAt: string | null;
  endedAt: string | null;
  timesFrom: 'AGENT' | 'HOST';
  finishReason: string | null;
  usage: TokenUsage | null;
  /** Where the agent prices each call (else the turn's cost, reported apart). */
  cost?: number | null;
}

const plus = (a: number | null, b: number | null) => (a === null || b === null ? null : a + b);

/** Usages summed; a count only when every usage gives it. */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens, reasoningTokens: plus(a.reasoningTokens, b.reasoningTokens),
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens, cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    cacheWrite5mTokens: plus(a.cacheWrite5mTokens, b.cacheWrite5mTokens), cacheWrite1hTokens: plus(a.cacheWrite1hTokens, b.cacheWrite1hTokens),
  };
}

/**
 * What the settlement of a turn says of its model calls (settleExecution's usage, model, finishReason and
 * modelCalls): the usage summed over the calls that report one, the last call's model and finish reason, and
 * each call. No calls: nothing (the turn made no model request, or the agent recorded none).
 */
export function settlementOfCalls(calls: readonly ModelCall[]) {
  const used = calls.map((c) => c.usage).filter((u): u is TokenUsage => u !== null);
  const last = calls.at(-1);
  return {
    ...(used.length ? { usage: used.reduce(addUsage) } : {}),
    ...(last?.modelID ? { model: { providerID: last.providerID, modelID: last.modelID } } : {}),
    ...(last?.finishReason ? { finishReason: last.finishReason } : {}),
    ...(calls.length ? {
      modelCalls: calls.map((c) => ({
        externalID: c.externalID, model: c.modelID ? { providerID: c.providerID, modelID: c.modelID } : null,
        startedAt: c.startedAt, endedAt: c.endedAt, timesFrom: c.timesFrom, finishReason: c.finishReason,
        usage: c.usage || c.cost != null ? { ...(c.usage ?? {}), ...(c.cost != null ? { cost: c.cost } : {}) } : null,
      })),
    } : {}),
  };
}
