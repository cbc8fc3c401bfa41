import SchemaBuilder from '@pothos/core';
import ErrorsPlugin from '@pothos/plugin-errors';
import { GraphQLError, Kind, type ValueNode } from 'graphql';
import type { Context } from '../resolvers/context.js';
import type { Role } from '../domain/access.js';

const upperFirst = (s: string) => s[0].toUpperCase() + s.slice(1);

/** The one SchemaBuilder. Field results are non-null unless marked; expected failures are union members. */
export const builder = new SchemaBuilder<{
  Context: Context;
  DefaultFieldNullability: false;
  Scalars: {
    JSON: { Input: unknown; Output: unknown };
    DateTime: { Input: Date; Output: Date | string };
  };
}>({
  plugins: [ErrorsPlugin],
  defaultFieldNullability: false,
  errors: {
    directResult: true,
    defaultUnionOptions: { name: ({ fieldName }) => `${upperFirst(fieldName)}Result` },
  },
});

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
