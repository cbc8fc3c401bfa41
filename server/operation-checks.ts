import type { Plugin } from 'graphql-yoga';

type ExecuteHook = NonNullable<Plugin['onExecute']>;
type SubscribeHook = NonNullable<Plugin['onSubscribe']>;
type Event = Parameters<ExecuteHook>[0] & Parameters<SubscribeHook>[0];
type Done = ((payload: any) => unknown) | undefined;

/**
 * The gateway's checks of an operation (the request record, roles, input validation, cost), whose
 * `onExecute` and `onSubscribe` hooks are synchronous, run as one envelop hook each, in the order given:
 * envelop runs every hook through its promise-aware iteration (an event object with three closures and
 * a chain of promise helpers per hook and request), which for these four cost more than the checks.
 *
 * Envelop's rules hold: the hooks run in order with the same event; one that stops the operation
 * (`setResultAndStopExecution`) stops the ones after it; the `onExecuteDone` / `onSubscribeResult` of
 * those that ran are called in order, with the result (the stopping one's included), and what they
 * return (stream handlers) is kept. A hook that returns a promise is a programming error: it is refused
 * at its first call, never silently raced. The plugins' other hooks stay
 * where they were (the returned list: the combined hooks first, then each plugin without them).
 */
export function inOrder(plugins: Plugin<any, any, any>[]): Plugin<any, any, any>[] {
  const execute = plugins.map((p) => p.onExecute?.bind(p)).filter((h): h is ExecuteHook => !!h);
  const subscribe = plugins.map((p) => p.onSubscribe?.bind(p)).filter((h): h is SubscribeHook => !!h);
  const rest = plugins.map(({ onExecute: _e, onSubscribe: _s, ...p }) => p);
  return [{ onExecute: (ev) => run(execute, ev as Event, 'onExecuteDone'), onSubscribe: (ev) => run(subscribe, ev as Event, 'onSubscribeResult') }, ...rest];
}

function run(hooks: ((ev: any) => unknown)[], ev: Event, doneKey: 'onExecuteDone' | 'onSubscribeResult') {
  let stopped = false;
  const own = { ...ev, setResultAndStopExecution: (r: any) => { stopped = true; ev.setResultAndStopExecution(r); } };
  let dones: Done[] | null = null;
  for (const hook of hooks) {
    const r = hook(own) as Record<string, Done> | void | Promise<unknown>;
    if (r && typeof (r as Promise<unknown>).then === 'function') throw new Error('inOrder: an operation check returned a promise; it must be synchronous');
    const done = r && (r as Record<string, Done>)[doneKey];
    if (done) (dones ??= []).push(done);
    if (stopped) break;
  }
  if (!dones) return undefined;
  return { [doneKey]: chained(dones) };
}

/**
 * Handlers called in order, as envelop calls its hooks' own: each with the result as the ones before
 * left it (`setResult` changes it for the next and for envelop), and what they return chained the same way.
 */
function chained(handlers: Done[]) {
  return (payload: { result: unknown; setResult: (r: any) => void }) => {
    let result = payload.result;
    const own = (p: typeof payload) => ({ ...p, result, setResult: (r: unknown) => { result = r; p.setResult(r); } });
    let onNext: Done[] | null = null;
    let onEnd: (() => unknown)[] | null = null;
    for (const h of handlers) {
      const r = h!(own(payload)) as { onNext?: Done; onEnd?: () => unknown } | void;
      if (r && typeof (r as unknown as Promise<unknown>).then === 'function') throw new Error('inOrder: a result hook of an operation check returned a promise; it must be synchronous');
      if (r?.onNext) (onNext ??= []).push(r.onNext);
      if (r?.onEnd) (onEnd ??= []).push(r.onEnd);
    }
    if (!onNext && !onEnd) return undefined;
    const nexts = onNext, ends = onEnd;
    return {
      onNext: nexts ? chained(nexts) : undefined,
      onEnd: ends ? () => { for (const f of ends) f(); } : undefined,
    };
  };
}
