import { GraphQLError } from 'graphql';

/** Server-side cap on `first` for every connection. */
export const MAX_PAGE = 100;
export const DEFAULT_PAGE = 20;

export interface Page<T extends object> {
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
class Edge<T extends object> {
  #cursor: string | undefined;
  constructor(readonly node: T, private readonly cursorOf: (row: T) => string) {}
  get cursor(): string { return (this.#cursor ??= this.cursorOf(this.node)); }
}

/** A page's info; its cursors are those of its first and last edge, encoded when read (see Edge). */
class PageInfo<T extends object> {
  readonly hasPreviousPage = false;
  constructor(private readonly edges: Edge<T>[], readonly hasNextPage: boolean) {}
  get startCursor(): string | null { return this.edges.length ? this.edges[0].cursor : null; }
  get endCursor(): string | null { return this.edges.length ? this.edges[this.edges.length - 1].cursor : null; }
}

/** Builds a page from up to limit+1 rows (the extra one only says there is a next page). Its nodes are the rows themselves (objects, never IDs), so the edges' loaders have nothing to load. */
export function toPage<T extends object>(rows: T[], limit: number, cursorOf: (row: T) => string): Page<T> {
  const n = Math.min(rows.length, limit);
  const edges: Edge<T>[] = new Array(n);
  for (let i = 0; i < n; i++) edges[i] = new Edge(rows[i], cursorOf);
  return { edges, pageInfo: new PageInfo(edges, rows.length > limit) };
}
