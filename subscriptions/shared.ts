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

/** Executions run and results reused (the benchmark and tests look at them). */
export const sharedStats = { executed: 0, reused: 0 };

const results = new WeakMap<object, Map<string, ExecutionResult | Promise<ExecutionResult>>>();

const value = (r: ExecutionResult): IteratorResult<ExecutionResult> => ({ done: false, value: r });

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
      r = x instanceof Promise ? x.then((v) => { group.set(key, v); return v; }) : x;
      m.set(key, r);
      sharedStats.executed++;
    }
    else sharedStats.reused++;
    return r;
  };
  // A plain iterator (not an async generator): return() must take effect while next() is pending.
  const mapped = {
    // Chained rather than awaited: one event costs every subscriber a few promise hops, no more.
    next(): Promise<IteratorResult<ExecutionResult>> {
      return it.next().then((n) => {
        if (n.done) return n as IteratorResult<ExecutionResult>;
        const r = run(n.value);
        return r instanceof Promise ? r.then(value) : value(r);
      });
    },
    async return(): Promise<IteratorResult<ExecutionResult>> {
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
