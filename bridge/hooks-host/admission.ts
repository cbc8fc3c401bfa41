// Admission decisions of a hooks-driven host: what a hook answers (exit 0, or exit 2 with a reason the agent
// shows), and the fallback when the gateway cannot decide in time: refused in a session the gateway fronts (its
// seal must be able to prove nothing started without it), let through in one it only observes.
import type { Gateway } from '../common/gateway.js';

export type Decision = { exit: 0 } | { exit: 2; reason: string };
/** Set when the hook was answered without the task's decision (the gateway unreachable or too slow). */
export interface Ticket { answered: boolean }
export const allow: Decision = { exit: 0 };
export const refuse = (reason: string): Decision => ({ exit: 2, reason });

export class Timeout extends Error {}

/** `p`, or a Timeout after `ms`. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([p, new Promise<T>((_, rej) => { t = setTimeout(() => rej(new Timeout(`${what}: no answer from the gateway within ${ms} ms`)), ms); })])
    .finally(() => clearTimeout(t));
}

/**
 * The decision of an admitting hook, or, when the gateway cannot be reached (a request found it so) or does not
 * answer within `timeoutMs`, the fallback: refused when `strict` (a fronted session), else let through. The
 * ticket records that the hook was answered without the decision, so the task undoes what it admits later.
 */
export async function decideWithin(gw: Gateway, decided: Promise<Decision>, ticket: Ticket, strict: boolean, event: string, timeoutMs: number,
  log: (m: string) => void, what = event === 'PreToolUse' ? 'tool call' : 'prompt'): Promise<Decision> {
  const down = gw.whenUnreachable();
  let timer: NodeJS.Timeout | undefined;
  const fallback = new Promise<string>((r) => {
    timer = setTimeout(() => r(`no answer from the gateway within ${timeoutMs} ms`), timeoutMs);
    void down.promise.then(() => r('the gateway cannot be reached'));
  });
  try {
    const r = await Promise.race([decided, fallback]);
    if (typeof r !== 'string') return r;
    ticket.answered = true;
    decided.catch(() => {});
    log(`${event}: ${r}: ${strict ? 'refused (a session the gateway fronts)' : 'let through (a session the gateway only observes)'}`);
    return strict ? refuse(`the gateway did not admit this ${what} (${r})`) : allow;
  } finally {
    clearTimeout(timer);
    down.cancel();
  }
}
