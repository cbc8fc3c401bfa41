import type { Sql } from '../db/connection.js';
import type { Actor } from '../domain/access.js';
import type { Gateway } from '../server/gateway.js';
import type { TokenCache } from '../server/token-cache.js';

/**
 * What every resolver gets: the pool, who is asking, and the instance's services. The read model's
 * batch loaders (resolvers/loaders.ts, the loadable objects of schema/refs.ts) are not in it: they
 * are cached by @pothos/plugin-dataloader per context object, built on first use.
 */
export interface Context {
  sql: Sql;
  actor: Actor;
  gateway: Gateway;
  /** The instance's authenticated-token cache: revokeToken drops the token from it at once. */
  tokens: TokenCache;
}

/**
 * The context of one subscription event: the subscription's context, as a new object, so the event
 * gets loaders of its own (they are cached per context object) and reads every object as it is when
 * the event is delivered, never as an earlier event of the same subscription cached it.
 */
export function eventContext<C extends object>(ctx: C): C {
  return { ...ctx };
}
