import { GraphQLError } from 'graphql';

/** Server-side cap on `first` for every connection. */
export const MAX_PAGE = 100;
export const DEFAULT_PAGE = 20;

export interface Page<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

export function badInput(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });
}

export function pageSize(first: number | null | undefined): number {
  const n = first ?? DEFAULT_PAGE;
  if (!Number.isInteger(n) || n < 0) throw badInput('first must be a non-negative integer.');
  if (n > MAX_PAGE) throw badInput(`first must be at most ${MAX_PAGE}.`);
  return n;
}

/** An edge whose cursor is encoded when it is read: most selections of a page read few cursors or none. */
class Edge<T> {
  #cursor: string | undefined;
  constructor(readonly node: T, private readonly cursorOf: (row: T) => string) {}
  get cursor(): string { return (this.#cursor ??= this.cursorOf(this.node)); }
}

/** Builds a page from up to limit+1 rows (the extra one only says there is a next page). */
export function toPage<T>(rows: T[], limit: number, cursorOf: (row: T) => string): Page<T> {
  const n = Math.min(rows.length, limit);
  const edges: Page<T>['edges'] = new Array(n);
  for (let i = 0; i < n; i++) edges[i] = new Edge(rows[i], cursorOf);
  return {
    edges,
    pageInfo: {
      hasNextPage: rows.length > limit,
      hasPreviousPage: false,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}
