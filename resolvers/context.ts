import type { Sql } from '../db/connection.js';
import type { Actor } from '../domain/access.js';
import type { Loaders } from './loaders.js';
import type { Gateway } from '../server/gateway.js';

/** What every resolver gets: the pool, who is asking, per-request batch loaders, and the instance's services. */
export interface Context {
  sql: Sql;
  actor: Actor;
  loaders: Loaders;
  gateway: Gateway;
}
