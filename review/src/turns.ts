import { ReviewTurnExecutionsDocument, ReviewTurnMessagesDocument, type ReviewTurnExecutionsQuery, type ReviewTurnMessagesQuery } from '../../client/index.js';
import { gateway } from './api.js';

/**
 * Turns: the executions one prompt started, grouped (issue 49, defect 7). An OpenCode turn is one execution per
 * step, every one of them `PROMPT`-triggered, the prompt a message sent outside any execution just before the first;
 * the reference host and Claude Code record the prompt inside the one execution of their turn. From those data
 * alone, an execution begins a turn when
 * - it is the session's first, or its trigger is not PROMPT (SYNTHETIC, COMMAND, RESUME: something else started it);
 * - or a prompt (a USER message, or one of PROMPT origin) was recorded in it;
 * - or a prompt was recorded outside any execution after the previous execution began and before it began;
 * - or it recorded no message at all (interrupted before it began, say): it answered no prompt, so it is not
 *   claimed as a step of the turn before it (the rule of the execution page's prompt, never carried forward);
 * and otherwise continues the turn of the execution before it (a step after the first of an OpenCode turn), when that
 * turn began with a prompt (or began among executions not read yet): executions of a host that records no prompts
 * are never run together into one turn for want of evidence.
 */
export interface TurnExecution { id: string; sequence: number; status: string; trigger: string; startedAt: string; settledAt?: string | null }
export interface TurnPrompt { id: string; text: string; createdAt: string; executionID: string | null; retracted: boolean }
export interface Turn {
  /** Its executions, oldest first. */
  executions: TurnExecution[];
  /** The prompt that started it (null: none recorded, e.g. a SYNTHETIC or RESUME execution, or a prompt outside the executions read). */
  prompt: TurnPrompt | null;
  /** What started its first execution. */
  trigger: string;
  /** False when its first execution read may continue a turn of older executions not read (the list stops there). */
  startKnown: boolean;
}

type MessageNode = NonNullable<ReviewTurnMessagesQuery['session']>['messages']['edges'][number]['node'];

const isPrompt = (m: { role: string; origin: string }) => m.role === 'USER' || m.origin === 'PROMPT';

/** What turns are read from: the session's prompts, and the executions that recorded a message. */
export interface TurnMessages { prompts: TurnPrompt[]; recorded: ReadonlySet<string> }

/** Groups executions (any order; contiguous sequences, the oldest ones possibly missing) into turns, oldest first. */
export function groupTurns(executions: readonly TurnExecution[], { prompts, recorded }: TurnMessages): Turn[] {
  const list = [...executions].sort((a, b) => a.sequence - b.sequence);
  const own = new Map<string, TurnPrompt>();
  for (const p of prompts) if (p.executionID && !own.has(p.executionID)) own.set(p.executionID, p);
  const outside = prompts.filter((p) => !p.executionID).map((p) => ({ p, at: new Date(p.createdAt).getTime() }));
  const turns: Turn[] = [];
  list.forEach((e, i) => {
    const prev = i > 0 && list[i - 1].sequence === e.sequence - 1 ? list[i - 1] : null;
    const start = new Date(e.startedAt).getTime();
    const since = prev ? new Date(prev.startedAt).getTime() : -Infinity;
    // The last prompt sent outside any execution between the previous execution's start and this one's.
    const before = outside.filter((x) => x.at > since && x.at <= start).pop()?.p ?? null;
    const prompt = own.get(e.id) ?? before;
    const known = e.sequence === 1 || e.trigger !== 'PROMPT' || !!own.get(e.id) || (!!prev && !!before) || !recorded.has(e.id);
    const last = turns[turns.length - 1];
    if (known || !prev || !last || !(last.prompt || !last.startKnown)) {
      // Without the execution before it, a prompt sent outside may be an older execution's: only its own is sure.
      turns.push({ executions: [e], prompt: prev || e.sequence === 1 ? prompt : own.get(e.id) ?? null, trigger: e.trigger, startKnown: known || !!prev });
    } else {
      turns[turns.length - 1].executions.push(e);
    }
  });
  return turns;
}

/**
 * The prompts of a session and the executions that recorded a message (every page of its messages, oldest first).
 * Given what an earlier call returned, only the messages recorded since are read (messages are listed in the order
 * they were recorded, so the earlier answer's cursor is where the new ones begin).
 */
export async function sessionMessages(sessionID: string, since?: TurnMessages & { after?: string | null }, maxPages = 50): Promise<TurnMessages & { after: string | null }> {
  const out: TurnPrompt[] = [...(since?.prompts ?? [])];
  const recorded = new Set<string>(since?.recorded ?? []);
  let after: string | null = since?.after ?? null;
  for (let page = 0; page < maxPages; page++) {
    const { session }: ReviewTurnMessagesQuery = await gateway().request(ReviewTurnMessagesDocument, { id: sessionID, after });
    if (!session) break;
    for (const { node } of session.messages.edges) {
      if (node.execution) recorded.add(node.execution.id);
      if (isPrompt(node)) out.push(promptOf(node));
    }
    after = session.messages.pageInfo.endCursor ?? after;
    if (!session.messages.pageInfo.hasNextPage) break;
  }
  return { prompts: out, recorded, after };
}

function promptOf(m: MessageNode): TurnPrompt {
  const text = m.parts.flatMap((p) => (p.__typename === 'TextPart' && 'text' in p ? [p.text] : [])).join('\n');
  return { id: m.id, text, createdAt: m.createdAt, executionID: m.execution?.id ?? null, retracted: !!m.retraction };
}

/**
 * The turn of one execution, with the session's executions read newest first until the turn's start is behind
 * (or every one is read) and the session's prompts.
 */
export async function turnOf(sessionID: string, executionID: string): Promise<Turn | null> {
  const prompts = sessionMessages(sessionID);
  const executions: TurnExecution[] = [];
  let after: string | null = null;
  for (let page = 0; page < 40; page++) {
    const { session }: ReviewTurnExecutionsQuery = await gateway().request(ReviewTurnExecutionsDocument, { id: sessionID, after });
    if (!session) return null;
    executions.push(...session.executions.edges.map((x) => x.node));
    const turns = groupTurns(executions, await prompts);
    const mine = turns.find((t) => t.executions.some((e) => e.id === executionID));
    if (mine?.startKnown) return mine;
    if (!session.executions.pageInfo.hasNextPage) return mine ?? null;
    after = session.executions.pageInfo.endCursor ?? null;
  }
  return groupTurns(executions, await prompts).find((t) => t.executions.some((e) => e.id === executionID)) ?? null;
}

/** A prompt's first line, cut for a heading. */
export function promptLine(p: TurnPrompt | null, max = 120): string | null {
  if (!p) return null;
  const line = p.text.split('\n').find((l) => l.trim()) ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
