// The cost Claude Code itself computed, from its transcript. Verified against 2.1.332 (real binary, scripted model):
// a `cost-state` line is appended when a Claude Code process exits (before the SessionEnd hook; never before a
// turn's Stop), with the session's running totals, restored on `--resume`: `totalCostUSD`, and per model
// (`modelUsage`, keyed by the model ID its assistant lines carry) `costUSD` with the tokens it priced
// (`inputTokens`, Anthropic's: without the cache; `outputTokens`; `cacheReadInputTokens`;
// `cacheCreationInputTokens`, of which `cacheCreationEphemeral5mInputTokens` / `…1hInputTokens`). Nothing in the
// transcript prices one model response or one turn; the `-p` result (`total_cost_usd`) is the same running total.
//
// So the cost of what a process ran is the difference between its cost-state and the one before (none: zero; a
// total that went down: a process that did not restore them, counted from zero), per model. A turn's cost is its
// share of that, per model, by its own model responses' tokens weighed at Anthropic's list-price ratios (every
// Claude model's: cache read 0.1, 5-minute cache write 1.25, 1-hour cache write 2, output 5 times the input price)
// against the tokens the cost-state priced: exactly Claude Code's figure for a turn that was its process's only
// user of a model (a `-p` run, a prompt the host ran, a resumed session with one prompt), and in proportion when
// several turns of one process used the same model. Tokens Claude Code priced outside the session's main turns
// (its subagents', its own side requests) stay out of every turn's share. Turns after the last cost-state have no
// cost yet: their process still runs (or died without writing one, and then none is reported).
import fs from 'node:fs';
import { isPrompt, parseTranscript, turnOf, type TranscriptLine, type Usage } from './transcript.js';

interface Priced { cost: number; input: number; output: number; read: number; write: number; write5m: number; write1h: number }

const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

/** A cost-state line's totals per model; null when the line is not one Claude Code wrote as described above. */
export function costState(l: TranscriptLine): Map<string, Priced> | null {
  if (l.type !== 'cost-state' || !l.modelUsage || typeof l.modelUsage !== 'object' || Array.isArray(l.modelUsage)) return null;
  const out = new Map<string, Priced>();
  for (const [model, v] of Object.entries(l.modelUsage as Record<string, unknown>)) {
    if (!v || typeof v !== 'object') continue;
    const u = v as Record<string, unknown>;
    if (typeof u.costUSD !== 'number' || !Number.isFinite(u.costUSD)) continue;
    out.set(model, {
      cost: n(u.costUSD), input: n(u.inputTokens), output: n(u.outputTokens), read: n(u.cacheReadInputTokens), write: n(u.cacheCreationInputTokens),
      write5m: n(u.cacheCreationEphemeral5mInputTokens), write1h: n(u.cacheCreationEphemeral1hInputTokens),
    });
  }
  return out;
}

/** Tokens weighed at Anthropic's list-price ratios (in units of one uncached input token). */
function weight(fresh: number, output: number, read: number, write: number, write5m: number, write1h: number): number {
  const timed = Math.min(write, write5m + write1h);
  return fresh + 5 * output + 0.1 * read + 1.25 * write5m + 2 * write1h + 1.25 * (write - timed);
}

const usageWeight = (u: Usage) => weight(Math.max(0, u.inputTokens - u.cacheReadTokens - u.cacheWriteTokens), u.outputTokens, u.cacheReadTokens,
  u.cacheWriteTokens, u.cacheWrite5mTokens ?? 0, u.cacheWrite1hTokens ?? 0);

/**
 * The cost Claude Code computed for each turn (by prompt ID) of the processes that ended in the transcript (a
 * cost-state after the turn), in US dollars. Main-chain turns only (a subagent's are in its own transcript).
 */
export function turnCosts(lines: TranscriptLine[]): Map<string, number> {
  const costs = new Map<string, number>();
  let previous = new Map<string, Priced>();
  let turns: string[] = [];
  for (const l of lines) {
    if (isPrompt(l) && typeof l.promptId === 'string' && !turns.includes(l.promptId)) { turns.push(l.promptId); continue; }
    const state = costState(l);
    if (!state) continue;
    const restarted = [...state].some(([m, p]) => p.cost < (previous.get(m)?.cost ?? 0) - 1e-12);
    const base = restarted ? new Map<string, Priced>() : previous;
    const byTurn = new Map(turns.map((t) => [t, new Map<string, number>()]));
    for (const t of turns) {
      for (const s of turnOf(lines, t).steps) {
        if (!s.usage || !s.model) continue;
        const w = byTurn.get(t)!;
        w.set(s.model, (w.get(s.model) ?? 0) + usageWeight(s.usage));
      }
    }
    for (const t of turns) costs.set(t, 0);
    for (const [model, now] of state) {
      const b = base.get(model);
      const d = (k: keyof Priced) => Math.max(0, now[k] - (b?.[k] ?? 0));
      const cost = d('cost');
      const priced = weight(d('input'), d('output'), d('read'), d('write'), d('write5m'), d('write1h'));
      if (cost <= 0 || priced <= 0) continue;
      const used = turns.map((t) => byTurn.get(t)!.get(model) ?? 0);
      const total = used.reduce((a, x) => a + x, 0);
      // Shares of what Claude Code priced; more than all of it (counts that disagree with its own) is scaled down.
      const scale = total > priced ? priced / total : 1;
      turns.forEach((t, i) => costs.set(t, costs.get(t)! + cost * (used[i] * scale) / priced));
    }
    previous = state;
    turns = [];
  }
  return costs;
}

/**
 * The costs to report of a session's settled turns (by prompt ID, with their execution) that have none yet: the
 * turns of its transcript's ended processes. A transcript that cannot be read has none (a later hook tries again).
 */
export function costsToReport(transcript: string, turns: Readonly<Record<string, { executionID: string; settled: boolean; cost?: number }>>) {
  let text: string;
  try { text = fs.readFileSync(transcript, 'utf8'); } catch { return []; }
  return [...turnCosts(parseTranscript(text).lines)].flatMap(([promptId, cost]) => {
    const ts = turns[promptId];
    return ts?.settled && ts.cost === undefined ? [{ promptId, executionID: ts.executionID, cost }] : [];
  });
}
