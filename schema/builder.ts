import SchemaBuilder from '@pothos/core';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import ErrorsPlugin from '@pothos/plugin-errors';
import RelayPlugin from '@pothos/plugin-relay';
import MutationFreshnessPlugin from './mutation-freshness.js';
import PageReadsPlugin, { PAGE_READ } from './page-reads.js';
import { GraphQLError, Kind, type ValueNode } from 'graphql';
import type { Context } from '../resolvers/context.js';
import type { Role } from '../domain/access.js';
import { kindOf } from '../domain/ids.js';

const upperFirst = (s: string) => s[0].toUpperCase() + s.slice(1);

/** The object types a `node(id)` resolves, by the prefix of their IDs (domain/ids.ts). */
const NODE_TYPES: Record<string, string> = { session: 'Session', execution: 'Execution', message: 'Message', job: 'Job' };
/** Their loaders (the loadable objects of refs.ts, registered by nodeType). */
const nodeLoaders = new Map<string, (ctx: Context) => { load(id: string): Promise<unknown> }>();

/**
 * The one SchemaBuilder. Field results are non-null unless marked; expected failures are union members.
 *
 * The read model: every object a field reads is loaded through @pothos/plugin-dataloader (loadable
 * objects in refs.ts, the other batched reads in resolvers/loaders.ts), whose loaders live in a cache
 * keyed by the context object: one set per request, one per subscription event (subscriptions/shared.ts
 * gives each event its own context). @pothos/plugin-relay makes the Node interface, `node(id)` and the
 * connection types. IDs are the API's own prefixed IDs (`ses_…`), not base64 global IDs: `ID` is typed
 * `string` both ways, and the Node type of an ID is read from its prefix.
 */
export const builder = new SchemaBuilder<{
  Context: Context;
  DefaultFieldNullability: false;
  DefaultEdgesNullability: { list: false; items: false };
  DefaultNodeNullability: false;
  Scalars: {
    ID: { Input: string; Output: string };
    JSON: { Input: unknown; Output: unknown };
    DateTime: { Input: Date; Output: Date | string };
  };
}>({
  // PageReadsPlugin first: it sees each resolver as the other plugins left it (schema/page-reads.ts).
  plugins: [PageReadsPlugin, ErrorsPlugin, RelayPlugin, DataloaderPlugin, MutationFreshnessPlugin],
  defaultFieldNullability: false,
  errors: {
    directResult: true,
    defaultUnionOptions: { name: ({ fieldName }) => `${upperFirst(fieldName)}Result` },
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // A connection's `edges`, `pageInfo` and edges' `node` read the page its field resolved (PAGE_READ):
    // every connection of the schema is built by schema/connection.ts from pages of rows (toPage).
    edgesFieldOptions: { nullable: { list: false, items: false }, extensions: PAGE_READ },
    nodeFieldOptions: { nullable: false, extensions: PAGE_READ },
    pageInfoFieldOptions: { extensions: PAGE_READ },
    nodeTypeOptions: { description: 'An object with a stable, prefixed ID (ses_, exe_, msg_, job_).' },
    nodesQueryOptions: false,
    // `node(id)` is answered by the loadable object of the ID's type (registered by nodeType); an ID of no
    // Node type reads as missing (null), like a missing one.
    nodeQueryOptions: { resolve: (_r, { id }, ctx) => nodeLoaders.get(id.typename)?.(ctx).load(id.id) ?? null },
    encodeGlobalID: (_typename, id) => String(id),
    decodeGlobalID: (id) => ({ typename: NODE_TYPES[kindOf(id) ?? ''] ?? '', id }),
  },
});

/** Makes a loadable object the answer of `node(id)` for IDs of its type. */
export function nodeType<R extends { name: string; getDataloader: (ctx: Context) => { load(id: string): Promise<unknown> } }>(ref: R): R {
  nodeLoaders.set(ref.name, (ctx) => ref.getDataloader(ctx));
  return ref;
}

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});

function parseLiteralJson(ast: ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map(parseLiteralJson);
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, parseLiteralJson(f.value)]));
    default:
      throw new GraphQLError('JSON literals cannot contain variables.');
  }
}

builder.scalarType('JSON', {
  description: 'Any JSON value.',
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: (ast) => parseLiteralJson(ast),
});

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

builder.scalarType('DateTime', {
  description: 'An instant, as an ISO 8601 string in UTC.',
  serialize: (v) => (v instanceof Date ? v.toISOString() : new Date(v as string).toISOString()),
  parseValue: (v) => {
    // Strictly ISO 8601 with a zone (`2026-12-01T09:15:00Z`, `…00.123+01:00`): JavaScript's Date parses far
    // more ("0" is the year 2000), which would store a value the caller never meant.
    if (typeof v !== 'string' || !ISO_INSTANT.test(v)) throw new GraphQLError('DateTime must be an ISO 8601 string with a time zone (e.g. 2026-12-01T09:15:00Z).');
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string with a time zone (e.g. 2026-12-01T09:15:00Z).');
    return d;
  },
});

/**
 * Who may call a root field. Query and subscription fields without this are for readers (reader,
 * plugin, admin); admin may call everything. The check runs before execution (server/access.ts).
 */
export function allow(...roles: Role[]) {
  return { roles: [...new Set<Role>([...roles, 'admin'])] };
}
