import type { Sql } from '../db/connection.js';
import { SYSTEM, type Actor } from '../domain/access.js';
import { createLoaders, type Loaders } from './loaders.js';
import type { Gateway } from '../server/gateway.js';
import type { TokenCache } from '../server/token-cache.js';

/** What every resolver gets: the pool, who is asking, per-request batch loaders, and the instance's services. */
export interface Context {
  sql: Sql;
  actor: Actor;
  loaders: Loaders;
  gateway: Gateway;
  /** The instance's authenticated-token cache: revokeToken drops the token from it at once. */
  tokens: TokenCache;
}

const REAL = Symbol('loaders');
const ARGS = Symbol('args');

/** Stands for a request's loaders; builds them (createLoaders) when one is first used. */
class LazyLoaders {
  [REAL]: Loaders | null = null;
  [ARGS]: [Sql, Actor];
  constructor(sql: Sql, actor: Actor) { this[ARGS] = [sql, actor]; }
}
// The loader names, from one set built without a database (createLoaders only makes closures and loaders).
for (const key of Object.keys(createLoaders(null as unknown as Sql, SYSTEM)) as (keyof Loaders)[]) {
  Object.defineProperty(LazyLoaders.prototype, key, {
    get(this: LazyLoaders) {
      let real = this[REAL];
      if (!real) real = this[REAL] = createLoaders(...this[ARGS]);
      return real[key];
    },
  });
}

/**
 * The request's loaders, built on first use: a request that reads nothing through them (`{ __typename }`,
 * most mutations) does not pay for a dozen DataLoaders. Same object for the whole request.
 */
export function lazyLoaders(sql: Sql, actor: Actor): Loaders {
  return new LazyLoaders(sql, actor) as unknown as Loaders;
}
