import { builder } from './builder.js';

/**
 * A Relay connection type `<Name>Connection { edges: [<Name>Edge!]!, pageInfo: PageInfo! }` with
 * `<Name>Edge { cursor, node }` (@pothos/plugin-relay). Its fields read the page the parent field
 * resolved (resolvers/pagination.ts `Page`, built by `toPage` from rows), as plain property reads
 * (schema/page-reads.ts): a field of this type must resolve to such a page, its nodes rows, never IDs.
 * Cursors come from resolvers/cursors.ts.
 */
export function connectionOf<Node extends Parameters<typeof builder.connectionObject>[0]['type']>(name: string, type: Node) {
  return builder.connectionObject({ type, name: `${name}Connection` });
}

/**
 * The page arguments every connection field takes (`first` is capped server-side). Forward paging
 * only: the API has no `last`/`before`, so fields take these instead of the plugin's four arguments.
 */
export const pageArgs = builder.args((t) => ({
  first: t.int({ required: false, description: 'At most 100 (default 20).' }),
  after: t.string({ required: false }),
}));
