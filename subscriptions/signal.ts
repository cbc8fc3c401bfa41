import type { Context } from '../resolvers/context.js';

/**
 * Ends a subscriber's stream when its token is revoked. The check reads the token table whenever the
 * bus reports a revocation or the listening connection came back.
 */
export function liveSignal(ctx: Context) {
  const fns: (() => void)[] = [];
  const state = {
    aborted: false,
    onAbort(fn: () => void) { fns.push(fn); },
    dispose() { off1(); off2(); },
  };
  const check = async () => {
    const [t] = await ctx.sql`SELECT 1 FROM tokens WHERE id = ${ctx.actor.tokenID} AND revoked_at IS NULL`;
    if (!t && ctx.actor.tokenID !== 'system') {
      state.aborted = true;
      off1(); off2();
      for (const fn of fns) fn();
    }
  };
  const off1 = ctx.gateway.bus.on('tokens', () => void check().catch(() => {}));
  const off2 = ctx.gateway.bus.onResync(() => void check().catch(() => {}));
  return state;
}
