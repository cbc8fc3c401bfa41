import type { Plugin } from 'graphql-yoga';

type ExecuteHook = NonNullable<Plugin['onExecute']>;
type SubscribeHook = NonNullable<Plugin['onSubscribe']>;
type Event = Parameters<ExecuteHook>[0] & Parameters<SubscribeHook>[0];
type ResultHook = (payload: { result: unknown; setResult: (r: any) => void }) => unknown;

/**
 * The gateway's checks of an operation (the request record, roles, input validation, cost) and the
 * choice of a query's compiled executor (resolvers/compiled.ts), whose `onExecute` and `onSubscribe`
 * hooks are synchronous, run as one envelop hook each, in the order given:
 * envelop runs every hook through its promise-aware iteration (an event object with three closures and
 * a chain of promise helpers per hook and request), which for these four cost more than the checks.
 *
 * Envelop's rules hold: the hooks run in order with the same event; one that stops the operation
 * (`setResultAndStopExecution`) stops the ones after it; the result hooks (`onExecuteDone`,
 * `onSubscribeResult`) of those that ran are called in order, each with the result as the ones before
 * left it. These checks are synchronous and return no stream handlers: a hook that returns a promise, or
 * a result hook that returns anything, is a programming error, refused at its first call rather than
 * silently raced or dropped. The plugins' other hooks stay where they were (the returned list: the
 * combined hooks first, then each plugin without them).
 */
export function inOrder(plugins: Plugin<any, any, any>[]): Plugin<any, any, any>[] {
  const execute = plugins.map((p) => p.onExecute?.bind(p)).filter((h): h is ExecuteHook => !!h);
  const subscribe = plugins.map((p) => p.onSubscribe?.bind(p)).filter((h): h is SubscribeHook => !!h);
  const rest = plugins.map(({ onExecute: _e, onSubscribe: _s, ...p }) => p);
  return [{ onExecute: (ev) => run(execute, ev as Event, 'onExecuteDone'), onSubscribe: (ev) => run(subscribe, ev as Event, 'onSubscribeResult') }, ...rest];
}

function run(hooks: ((ev: any) => unknown)[], ev: Event, resultKey: 'onExecuteDone' | 'onSubscribeResult') {
  let stopped = false;
  const own = { ...ev, setResultAndStopExecution: (r: any) => { stopped = true; ev.setResultAndStopExecution(r); } };
  let results: ResultHook[] | null = null;
  for (const hook of hooks) {
    const r = hook(own) as Record<string, ResultHook | undefined> | void;
    if (r && typeof (r as unknown as Promise<unknown>).then === 'function') throw new Error('inOrder: an operation check returned a promise; it must be synchronous');
    const onResult = r?.[resultKey];
    if (onResult) (results ??= []).push(onResult);
    if (stopped) break;
  }
  if (!results) return undefined;
  const all = results;
  return {
    [resultKey]: (payload: Parameters<ResultHook>[0]) => {
      let result = payload.result;
      for (const h of all) {
        const r = h({ ...payload, result, setResult: (x: unknown) => { result = x; payload.setResult(x); } });
        if (r !== undefined) throw new Error(`inOrder: an ${resultKey} of an operation check returned a value; it must return nothing`);
      }
    },
  };
}
