import { expect, test } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fakePromise, fakeRejectPromise, handleMaybePromise, iterateAsync, unfakePromise } from '@whatwg-node/promise-helpers';

/**
 * The patched dependency (patches/@whatwg-node+promise-helpers+1.3.2.patch, a backport of 2.0.2's
 * handleMaybePromise, whose release needs Node 22): without a finally callback, handleMaybePromise calls
 * its factories directly when the input is not a thenable, instead of threading the value through three
 * temporary fake promises (an object and three closures each). Envelop and Yoga call it about fourteen
 * times per request, every hook of every phase: it was a quarter of what a `{ __typename }` request
 * allocates (43.0 KB before, 32.2 KB after). What it answers must not change: the same value, thrown
 * error or promise outcome, from the same factory calls, as the fake-promise chain.
 */

test('the installed @whatwg-node/promise-helpers is the patched one, in both its builds (npm ci runs patch-package from postinstall)', () => {
  const dir = path.dirname(path.dirname(createRequire(import.meta.url).resolve('@whatwg-node/promise-helpers')));
  for (const f of ['cjs/index.js', 'esm/index.js']) expect(readFileSync(path.join(dir, f), 'utf8'), f).toContain('SYNC_PATH');
});

/** handleMaybePromise as 1.3.2 shipped it: the fake-promise chain (the reference). */
function chained(input: () => unknown, success?: (v: any) => unknown, error?: (e: any) => unknown): unknown {
  return unfakePromise(fakePromise().then(input as any).then(success as any, error as any));
}

type Outcome = { kind: 'value' | 'throw' | 'resolves' | 'rejects'; value: unknown; calls: string[] };

/** Runs one of the two implementations and records what it answered and which factories it called, with what. */
async function outcome(impl: typeof chained, make: Case): Promise<Outcome> {
  const calls: string[] = [];
  const tag = (v: unknown) => (v instanceof Error ? `Error(${v.message})` : JSON.stringify(v) ?? 'undefined');
  const produce = (what: Produce, label: string, arg?: unknown): unknown => {
    calls.push(`${label}(${arg === undefined ? '' : tag(arg)})`);
    switch (what) {
      case 'value': return { from: label };
      case 'throw': throw new Error(label);
      case 'resolved': return Promise.resolve({ from: label, async: true });
      case 'rejected': return Promise.reject(new Error(`${label} async`));
      case 'fake': return fakePromise({ from: label, fake: true });
      case 'fakeRejected': return fakeRejectPromise(new Error(`${label} fake`));
      case 'undefined': return undefined;
    }
  };
  let r: unknown;
  try {
    r = impl(
      () => produce(make.input, 'input'),
      make.success === null ? undefined : (v) => produce(make.success!, 'success', v),
      make.error === null ? undefined : (e) => produce(make.error!, 'error', e),
    );
  } catch (e) {
    return { kind: 'throw', value: tag(e), calls };
  }
  if (r && typeof (r as PromiseLike<unknown>).then === 'function') {
    try {
      return { kind: 'resolves', value: tag(await r), calls };
    } catch (e) {
      return { kind: 'rejects', value: tag(e), calls };
    }
  }
  return { kind: 'value', value: tag(r), calls };
}

type Produce = 'value' | 'throw' | 'resolved' | 'rejected' | 'fake' | 'fakeRejected' | 'undefined';
type Case = { input: Produce; success: Produce | null; error: Produce | null };
const produce = fc.constantFrom<Produce>('value', 'throw', 'resolved', 'rejected', 'fake', 'fakeRejected', 'undefined');

test('handleMaybePromise answers what the fake-promise chain answered, for every kind of input, success and error factory', async () => {
  await fc.assert(fc.asyncProperty(
    fc.record({ input: produce, success: fc.option(produce, { nil: null }), error: fc.option(produce, { nil: null }) }),
    async (c) => {
      expect(await outcome(handleMaybePromise as typeof chained, c)).toEqual(await outcome(chained, c));
    },
  ), { numRuns: 400 });
});

test('a synchronous input goes through without a promise or a fake one: the answer is the success factory\'s own value', () => {
  const answer = { ok: true };
  expect(handleMaybePromise(() => 1, (n) => (n === 1 ? answer : null))).toBe(answer);
  // And a hook chain over synchronous hooks (envelop's iterateAsync) stays synchronous, in order.
  const seen: number[] = [];
  expect(iterateAsync([1, 2, 3], (n) => { seen.push(n); })).toBeUndefined();
  expect(seen).toEqual([1, 2, 3]);
});

test('with a finally callback the chain is kept: it runs once, after success and after failure', async () => {
  const order: string[] = [];
  expect(handleMaybePromise(() => 'v', (v) => { order.push(`ok ${v}`); return v; }, undefined, () => { order.push('finally'); })).toBe('v');
  expect(() => handleMaybePromise(() => { throw new Error('boom'); }, (v) => v, undefined, () => { order.push('finally after throw'); })).toThrow('boom');
  await expect(handleMaybePromise(() => Promise.resolve('p'), (v) => v, undefined, () => { order.push('finally async'); })).resolves.toBe('p');
  expect(order).toEqual(['ok v', 'finally', 'finally after throw', 'finally async']);
});
