import { expect, test } from 'vitest';
import { buildSchema, parse } from 'graphql';
import { envelop, useEngine, type Plugin } from '@envelop/core';

/**
 * The patched dependency (patches/@envelop+core+5.6.1.patch) at its own surface: the onNext hooks of
 * onSubscribeResult run on every result of a subscription, in order, as before the patch (each hook
 * sees the result as the ones before it left it, a hook's promise is awaited before the next runs), a
 * hook that throws or rejects closes the source stream and fails that step, the error hooks
 * (onSubscribeError: yoga's masking) map a failure of the source or of a hook, and return() reaches the
 * source. The unpatched package passes these too. subscriptions/shared.ts's streams pass through this on every event for every subscriber.
 */
const schema = buildSchema('type Query { x: Int } type Subscription { n: Int }');
const document = parse('subscription { n }');

/** A source stream of `values` (failing instead of giving the one at `failAt`), recording whether it was closed. */
function source(values: unknown[], failAt?: number) {
  let i = 0;
  const state = { closed: 0 };
  const it = {
    next: () => (i === failAt ? (i++, Promise.reject(new Error('source failed')))
      : Promise.resolve(i < values.length ? { done: false, value: values[i++] } : { done: true, value: undefined })),
    return: () => { state.closed++; return Promise.resolve({ done: true, value: undefined }); },
    [Symbol.asyncIterator]() { return it; },
  };
  return { it, state };
}

async function subscribeWith(values: unknown[], hooks: ((p: { result: any; setResult: (r: any) => void }) => unknown)[],
  opts: { maskErrors?: boolean; onEnd?: () => void; failAt?: number } = {}) {
  const src = source(values, opts.failAt);
  const plugins: Plugin[] = [useEngine({ subscribe: () => src.it as any, execute: () => ({}) as any, parse, validate: () => [] as any, specifiedRules: [] })];
  for (const h of hooks) plugins.push({ onSubscribe: () => ({ onSubscribeResult: () => ({ onNext: h as any, ...(opts.onEnd ? { onEnd: opts.onEnd } : {}) }) }) });
  // What yoga's masking does to a stream's failure: the error hooks replace it.
  if (opts.maskErrors) plugins.push({ onSubscribe: () => ({ onSubscribeError: ({ error, setError }) => setError(new Error(`masked: ${(error as Error).message}`)) }) });
  const { subscribe, contextFactory } = envelop({ plugins })();
  const stream = (await subscribe({ schema, document, contextValue: await contextFactory() })) as AsyncIterableIterator<any>;
  return { stream, state: src.state };
}

const drain = async (s: AsyncIterableIterator<any>) => { const out: unknown[] = []; for (;;) { const r = await s.next(); if (r.done) return out; out.push(r.value); } };

test('every result passes every hook in order, each seeing what the one before set; a hook promise is awaited first', async () => {
  const seen: string[] = [];
  const { stream } = await subscribeWith([{ data: { n: 1 } }, Promise.resolve({ data: { n: 2 } })], [
    ({ result, setResult }) => { seen.push(`a${result.data.n}`); setResult({ data: { n: result.data.n * 10 } }); },
    async ({ result, setResult }) => { await new Promise((r) => setImmediate(r)); seen.push(`b${result.data.n}`); setResult({ data: { n: result.data.n + 1 } }); },
    ({ result }) => { seen.push(`c${result.data.n}`); },
  ]);
  expect(await drain(stream)).toEqual([{ data: { n: 11 } }, { data: { n: 21 } }]);
  expect(seen).toEqual(['a1', 'b10', 'c11', 'a2', 'b20', 'c21']);
});

test('a hook that throws, or whose promise rejects, closes the source and fails that step', async () => {
  for (const fail of [() => { throw new Error('hook failed'); }, () => Promise.reject(new Error('hook failed'))]) {
    const { stream, state } = await subscribeWith([{ data: { n: 1 } }, { data: { n: 2 } }], [({ result }) => (result.data.n === 2 ? fail() : undefined)]);
    expect(await stream.next()).toEqual({ done: false, value: { data: { n: 1 } } });
    await expect(stream.next()).rejects.toThrow('hook failed');
    expect(state.closed).toBe(1);
  }
});

test('return() reaches the source and ends the stream', async () => {
  const { stream, state } = await subscribeWith([{ data: { n: 1 } }, { data: { n: 2 } }], [() => undefined]);
  expect((await stream.next()).value).toEqual({ data: { n: 1 } });
  expect(await stream.return!()).toEqual({ done: true, value: undefined });
  expect(state.closed).toBe(1);
});

test('the error hooks map a failure of the source or of a hook, with or without an onEnd hook in between', async () => {
  for (const onEnd of [undefined, () => {}]) {
    const fromSource = await subscribeWith([{ data: { n: 1 } }, { data: { n: 2 } }], [() => undefined], { maskErrors: true, onEnd, failAt: 1 });
    expect((await fromSource.stream.next()).value).toEqual({ data: { n: 1 } });
    await expect(fromSource.stream.next()).rejects.toThrow('masked: source failed');
    const fromHook = await subscribeWith([{ data: { n: 1 } }, { data: { n: 2 } }], [({ result }) => { if (result.data.n === 2) throw new Error('hook failed'); }], { maskErrors: true, onEnd });
    expect((await fromHook.stream.next()).value).toEqual({ data: { n: 1 } });
    await expect(fromHook.stream.next()).rejects.toThrow('masked: hook failed');
    expect(fromHook.state.closed).toBe(1);
    // Results pass unchanged.
    const clean = await subscribeWith([{ data: { n: 1 } }], [() => undefined], { maskErrors: true, onEnd });
    expect(await drain(clean.stream)).toEqual([{ data: { n: 1 } }]);
  }
});
