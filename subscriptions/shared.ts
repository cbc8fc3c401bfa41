import { createSourceEventStream, execute, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { eventContext, type Context } from '../resolvers/context.js';

/**
 * Executes each subscription event once per group of identical subscriptions instead of once per
 * subscriber. The feeds hand the same row object to every subscriber of an instance, so the result
 * of (event, operation text, variables, role, directory scope) is the same for all of them: the
 * first subscriber executes it, the others reuse the result (and its database reads, e.g.
 * `execution`). Results are keyed weakly by the event object, so they go with it.
 *
 * Same semantics as graphql-js `subscribe` (source stream, then `execute` with the event as root
 * value); the envelop hooks around subscribe (roles, limits, error masking of each result) still run.
 * Every event is executed with a context of its own (eventContext): the read model's loaders are
 * cached per context, so an event never reads what an earlier event of the subscription cached.
 */
export function useSharedSubscriptionExecution(): Plugin<Context> {
  return {
    onSubscribe({ args, setSubscribeFn }) {
      const ctx = args.contextValue as Context;
      const body = (args as any).document?.loc?.source?.body;
      // No source text to key on: each subscriber executes its own events.
      const key = body ? JSON.stringify([
        body,
        args.operationName ?? null,
        args.variableValues ?? null,
        ctx.actor?.role ?? null,
        ctx.actor?.directory ?? null,
      ]) : null;
      setSubscribeFn(((a: ExecutionArgs) => sharedSubscribe(a, key)) as any);
    },
  };
}

/**
 * Marks a result handed to several subscribers: graphql-ws (patches/graphql-ws+6.4.2.patch) then
 * serialises its payload once and frames it per subscription, instead of once per subscriber.
 */
const SHARED_RESULT = Symbol.for('graphql-ws.sharedResult');

function markShared(r: ExecutionResult): ExecutionResult {
  if (r && typeof r === 'object') Object.defineProperty(r, SHARED_RESULT, { value: true });
  return r;
}

/** Marks an array of results to be sent as one `next` message each, in order (the graphql-ws patch). */
const RESULT_BATCH = Symbol.for('graphql-ws.resultBatch');
/** The most events one step of a subscriber's stream carries. */
const MAX_BATCH = 256;

/** Executions run, results reused, and results that went out in a batch (the benchmark and tests look at them). */
export const sharedStats = { executed: 0, reused: 0, batched: 0 };

const results = new WeakMap<object, Map<string, ExecutionResult | Promise<ExecutionResult>>>();

async function sharedSubscribe(args: ExecutionArgs, key: string | null) {
  const stream = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in (stream as object))) return stream as ExecutionResult;
  const it = (stream as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  const once = (payload: unknown) => execute({ ...args, rootValue: payload, contextValue: eventContext(args.contextValue as object) });
  const run = (payload: unknown) => {
    if (key === null || payload === null || typeof payload !== 'object') return once(payload);
    let m = results.get(payload);
    if (!m) results.set(payload, (m = new Map()));
    let r = m.get(key);
    if (!r) {
      const x = once(payload);
      const group = m;
      // Once executed, the result itself is kept: the group's later subscribers take it without a hop.
      r = x instanceof Promise ? x.then((v) => { group.set(key, markShared(v)); return v; }) : markShared(x);
      m.set(key, r);
      sharedStats.executed++;
    }
    else sharedStats.reused++;
    return r;
  };
  // Events already at hand (the feed's `resumable` streams say so with takeReady) go out together:
  // their results as one RESULT_BATCH, which graphql-ws (patched) sends as one `next` message each,
  // in order, without a pass through every iterator layer per event. Only results executed and
  // without errors join a batch, so a result with errors still passes the envelop hooks (masking) on
  // its own; the first one that may not join is held and handed out next.
  const takeReady = typeof (it as { takeReady?: unknown }).takeReady === 'function'
    ? () => (it as unknown as { takeReady(): unknown }).takeReady()
    : () => undefined;
  let held: ExecutionResult | Promise<ExecutionResult> | null = null;
  const joins = (r: ExecutionResult | Promise<ExecutionResult>): r is ExecutionResult => !(r instanceof Promise) && !r.errors;
  const withReady = (first: ExecutionResult): IteratorResult<ExecutionResult> => {
    if (first.errors) return { done: false, value: first };
    let batch: ExecutionResult[] | null = null;
    while (!batch || batch.length < MAX_BATCH) {
      const payload = takeReady();
      if (payload === undefined) break;
      const r = run(payload);
      if (!joins(r)) { held = r; break; }
      (batch ??= [first]).push(r);
    }
    if (!batch) return { done: false, value: first };
    Object.defineProperty(batch, RESULT_BATCH, { value: true });
    sharedStats.batched += batch.length;
    return { done: false, value: batch as unknown as ExecutionResult };
  };
  // A plain iterator (not an async generator): return() must take effect while next() is pending.
  const mapped = {
    // Chained rather than awaited: one event costs every subscriber a few promise hops, no more.
    next(): Promise<IteratorResult<ExecutionResult>> {
      if (held !== null) {
        const h = held;
        held = null;
        return h instanceof Promise ? h.then(withReady) : Promise.resolve(withReady(h));
      }
      return it.next().then((n) => {
        if (n.done) return n as IteratorResult<ExecutionResult>;
        const r = run(n.value);
        return r instanceof Promise ? r.then(withReady) : withReady(r);
      });
    },
    async return(): Promise<IteratorResult<ExecutionResult>> {
      held = null;
      await it.return?.();
      return { done: true, value: undefined };
    },
    async throw(e?: unknown): Promise<IteratorResult<ExecutionResult>> {
      await it.return?.();
      throw e;
    },
    [Symbol.asyncIterator]() { return mapped; },
  };
  return mapped;
}
