/**
 * Waits for a condition that other parties make true (tests only; the gateway never polls): calls `fn` until
 * it answers something truthy, and answers that; first after 5 ms, then half as long again each time, up to
 * every 200 ms (a condition that comes at once is seen at once, a slow one is not polled hard). After `timeoutMs` it fails naming `what` and the
 * last error `fn` threw, if any. A condition a test needs, never a stand-in for "nothing happened".
 */
export async function until<T>(what: string, fn: () => T | null | undefined | false | Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (let pause = 5; ; pause = Math.min(200, pause * 1.5)) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) { last = e; }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String((last as Error)?.message ?? last)}` : ''}`);
    await new Promise((r) => setTimeout(r, pause));
  }
}
