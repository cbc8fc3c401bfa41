import { builder } from './builder.js';
import type { Page } from '../resolvers/pagination.js';

export const PageInfoRef = builder.objectRef<Page<unknown>['pageInfo']>('PageInfo').implement({
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage'),
    hasPreviousPage: t.exposeBoolean('hasPreviousPage'),
    startCursor: t.exposeString('startCursor', { nullable: true }),
    endCursor: t.exposeString('endCursor', { nullable: true }),
  }),
});

/** A Relay connection type `<Name>Connection` with `<Name>Edge { cursor node }`. */
export function connectionOf<T>(name: string, node: any) {
  const edge = builder.objectRef<Page<T>['edges'][number]>(`${name}Edge`).implement({
    fields: (t) => ({
      cursor: t.exposeString('cursor'),
      node: t.field({ type: node, resolve: (e) => e.node as any }),
    }),
  });
  return builder.objectRef<Page<T>>(`${name}Connection`).implement({
    fields: (t) => ({
      edges: t.field({ type: [edge], resolve: (c) => c.edges }),
      pageInfo: t.field({ type: PageInfoRef, resolve: (c) => c.pageInfo }),
    }),
  });
}

/** The page arguments every connection field takes (`first` is capped server-side). */
export const pageArgs = builder.args((t) => ({
  first: t.int({ required: false, description: 'At most 100 (default 20).' }),
  after: t.string({ required: false }),
}));
