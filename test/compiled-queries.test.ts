import { describe, expect, it } from 'vitest';
import {
  execute, parse, GraphQLBoolean, GraphQLError, GraphQLFloat, GraphQLID, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType,
  GraphQLSchema, GraphQLString, GraphQLUnionType, type GraphQLOutputType,
} from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { createYoga, type Plugin } from 'graphql-yoga';
import { useCompiledQueries } from '../resolvers/compiled.js';

/**
 * Queries run compiled (resolvers/compiled.ts), with the built-in scalars passed through as they are when
 * a value already has the scalar's JavaScript type and through graphql-js's serializers otherwise. The
 * gateway's own resolvers always give values of the right type, so the other branch is checked here, on a
 * schema whose fields give every kind of value: a compiled query answers exactly what graphql-js's
 * execute answers, coercions and refusals (with their messages and paths) included.
 */

/** A field per (scalar, value): `<scalar>_<n>` answers values[n]; `<scalar>_list` answers them all in a list. */
const VALUES: Record<string, { type: GraphQLOutputType; values: unknown[] }> = {
  Int: { type: GraphQLInt, values: [7, -2147483648, 2147483647, '7', true, false, 2147483648, -2147483649, 1.5, NaN, Infinity, '1.5', 'x', null, {}, [1], 10n] },
  Float: { type: GraphQLFloat, values: [1.5, -0, '1.5', true, NaN, Infinity, -Infinity, 'x', null, {}, 3] },
  String: { type: GraphQLString, values: ['s', '', 42, 1.5, true, false, NaN, {}, [1], null, { valueOf: () => 'from valueOf' }, Symbol('s')] },
  Boolean: { type: GraphQLBoolean, values: [true, false, 1, 0, 2, 'true', '', null, {}, NaN] },
  ID: { type: GraphQLID, values: ['id_1', '', 42, 1.5, true, null, {}, { toJSON: () => 'from toJSON' }] },
};

const fields: Record<string, { type: GraphQLOutputType; resolve: () => unknown }> = {};
for (const [name, { type, values }] of Object.entries(VALUES)) {
  values.forEach((v, i) => {
    fields[`${name}_${i}`] = { type, resolve: () => v };
    fields[`${name}_${i}_nonNull`] = { type: new GraphQLNonNull(type), resolve: () => v };
  });
  fields[`${name}_list`] = { type: new GraphQLList(type), resolve: () => values };
}
// Resolvers that fail, at once or later, with an error of the schema's own (code in its extensions) or any other.
fields.refuses = { type: GraphQLString, resolve: () => { throw new GraphQLError('refused', { extensions: { code: 'REFUSED' } }); } };
fields.refusesLater = { type: GraphQLString, resolve: async () => { throw new GraphQLError('refused later', { extensions: { code: 'REFUSED' } }); } };
fields.fails = { type: new GraphQLNonNull(GraphQLString), resolve: () => { throw new Error('failed'); } };
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: 'Query',
    fields: { ...fields, nested: { type: new GraphQLObjectType({ name: 'Nested', fields: () => fields }), resolve: () => ({}) } },
  }),
});

/** Which executor ran: the one envelop hands to the hooks after the compiled-queries plugin. */
let executeFnSeen: unknown = null;
const seeExecutor: Plugin = { onExecute({ executeFn }) { executeFnSeen = executeFn; } };
const yoga = createYoga({ schema, plugins: [useCompiledQueries(), seeExecutor], maskedErrors: false, logging: false });

async function compiled(query: string) {
  executeFnSeen = null;
  const res = await yoga.fetch('http://yoga/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  const body = await res.json();
  expect(executeFnSeen, 'the query ran on the compiled executor').not.toBeNull();
  expect(executeFnSeen).not.toBe(execute);
  return body;
}

/** graphql-js's answer, as it goes over the wire (errors by message, path and locations). */
async function interpreted(query: string) {
  return JSON.parse(JSON.stringify(await execute({ schema, document: parse(query) })));
}

/** Errors in the order of their paths: graphql-jit and graphql-js may report a selection's errors in another order. */
function byPath(r: { data?: unknown; errors?: { path?: unknown[] }[] }) {
  return { data: r.data, errors: r.errors && [...r.errors].sort((a, b) => JSON.stringify(a.path).localeCompare(JSON.stringify(b.path))) };
}

describe('compiled queries serialize the built-in scalars as graphql-js does', () => {
  for (const [name, { values }] of Object.entries(VALUES)) {
    it(`${name}: values of its own type as they are, every other value coerced or refused as graphql-js does`, async () => {
      const nullable = values.map((_, i) => `${name}_${i}`).join(' ');
      const query = `{ ${nullable} ${name}_list nested { ${nullable} } }`;
      const got = await compiled(query);
      expect(byPath(got)).toEqual(byPath(await interpreted(query)));
      // Some of the values are refused (each scalar has some), each with an error at its own field.
      expect(got.errors?.length).toBeGreaterThan(0);
    });

    it(`${name}: a refused or null value in a non-null field nulls its parent, as graphql-js does`, async () => {
      for (let i = 0; i < values.length; i++) {
        const query = `{ nested { ${name}_${i}_nonNull } ${name}_0 }`;
        expect(byPath(await compiled(query))).toEqual(byPath(await interpreted(query)));
      }
    });
  }

  it('errors of resolvers keep their message, extensions, path and places in the document (on several lines)', async () => {
    const query = `{
      refuses
      nested {
        refusesLater
        Int_0 fails
      }
      Int_0
    }`;
    const got = await compiled(query);
    expect(byPath(got)).toEqual(byPath(await interpreted(query)));
    expect(got.errors.map((e: { locations?: unknown }) => e.locations)).toEqual(expect.arrayContaining([[{ line: 2, column: 7 }], [{ line: 4, column: 9 }], [{ line: 5, column: 15 }]]));
    expect(got.errors.find((e: { message: string }) => e.message === 'refused').extensions).toEqual({ code: 'REFUSED' });
  });
});

describe('graphql-jit patched (patches/graphql-jit+0.8.9.patch)', () => {
  it('an abstract type\'s resolveType gets the abstract type as its fourth argument, as graphql-js gives it', async () => {
    const A = new GraphQLObjectType({ name: 'A', fields: { a: { type: GraphQLString } } });
    const B = new GraphQLObjectType({ name: 'B', fields: { b: { type: GraphQLString } } });
    const seen: unknown[] = [];
    // As Pothos's isTypeOf-based unions resolve: through the abstract type they are given.
    const AorB: GraphQLUnionType = new GraphQLUnionType({
      name: 'AorB', types: [A, B],
      resolveType: (v: { a?: string }, _c, _i, abstract) => { seen.push(abstract); return abstract.name === 'AorB' ? (v.a ? 'A' : 'B') : undefined; },
    });
    const s = new GraphQLSchema({ query: new GraphQLObjectType({ name: 'Query', fields: { x: { type: new GraphQLList(AorB), resolve: () => [{ a: '1' }, { b: '2' }] } } }) });
    const document = parse('{ x { __typename ... on A { a } ... on B { b } } }');
    const compiled = compileQuery(s, document);
    if (!isCompiledQuery(compiled)) throw new Error('not compiled');
    const expected = await execute({ schema: s, document });
    expect(expected.data).toEqual({ x: [{ __typename: 'A', a: '1' }, { __typename: 'B', b: '2' }] });
    expect(await compiled.query(undefined, {}, {})).toEqual(expected);
    expect(seen.every((t) => t === AorB)).toBe(true);
  });
});
