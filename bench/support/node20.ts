/**
 * PostGraphile v5 declares Node >= 22; on Node 20 it runs once `Promise.withResolvers` (Node 22) exists.
 * Imported before PostGraphile by the benchmarks that compare against it.
 */
const P = Promise as unknown as { withResolvers?: () => unknown };
if (typeof P.withResolvers !== 'function') {
  P.withResolvers = function withResolvers<T>() {
    let resolve!: (v: T | PromiseLike<T>) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej; });
    return { promise, resolve, reject };
  };
}
export {};
