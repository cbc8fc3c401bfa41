import {
  GraphQLBoolean, GraphQLError, GraphQLFloat, GraphQLID, GraphQLInt, GraphQLString, getOperationAST, print,
  type DocumentNode, type ExecutionArgs, type ExecutionResult, type Source, type SourceLocation,
} from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';

/**
 * Queries run compiled (graphql-jit): each distinct document is compiled once into a function that
 * resolves the selection without graphql-js's per-field interpretation (argument coercion, path and
 * promise bookkeeping per field), which is most of the CPU of reading a page of rows. The same
 * resolvers run, in the same order of loads, so answers, batching and errors are the same.
 *
 * Mutations and subscriptions keep graphql-js's execute (and subscriptions/shared.ts); a document the
 * compiler refuses falls back to it too. Compiled queries are kept with the parsed document (yoga's
 * parse cache holds a bounded number of those), keyed by operation name.
 */
const compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery | null>>();

/**
 * graphql-jit's `customSerializers` for the built-in scalars: a value already of the scalar's own
 * JavaScript type, which graphql-js's serializer answers unchanged, is answered as it is; any other
 * goes to graphql-js's serializer (coercions, and the errors of values it refuses). The same answers,
 * without graphql-js's object coercion checks for every string, number and boolean of a result.
 */
const INT_MAX = 2147483647;
const INT_MIN = -2147483648;
const serializers = {
  String: (v: unknown) => (typeof v === 'string' ? v : GraphQLString.serialize(v)),
  ID: (v: unknown) => (typeof v === 'string' ? v : GraphQLID.serialize(v)),
  Boolean: (v: unknown) => (typeof v === 'boolean' ? v : GraphQLBoolean.serialize(v)),
  Int: (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v <= INT_MAX && v >= INT_MIN ? v : GraphQLInt.serialize(v)),
  Float: (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : GraphQLFloat.serialize(v)),
};

function compiledFor(args: ExecutionArgs): CompiledQuery | null {
  let byName = compiled.get(args.document);
  if (!byName) compiled.set(args.document, (byName = new Map()));
  const name = args.operationName ?? '';
  let c = byName.get(name);
  if (c === undefined) {
    const op = getOperationAST(args.document, args.operationName);
    c = null;
    if (op?.operation === 'query') {
      try {
        const r = compileQuery(args.schema, args.document, args.operationName ?? undefined, { disablingCapturingStackErrors: true, customSerializers: serializers });
        if (isCompiledQuery(r)) c = r;
      } catch (e) {
        if (process.env.JIT_DEBUG) console.error('not compiled:', (e as Error).message, print(args.document));
      }
    }
    byName.set(name, c);
  }
  return c;
}

/**
 * graphql-jit's errors carry their `locations` but not the nodes, source and positions they come from;
 * Yoga rebuilds every error of a result from those (its result processor, `omitInternalsFromError`), so
 * a compiled query's errors went out without locations. Each becomes graphql-js's own GraphQLError, at
 * the same places of the same source, with the same path, extensions and original error.
 */
function located(result: ExecutionResult, source: Source | undefined): ExecutionResult {
  if (!result.errors?.length || !source) return result;
  const errors = result.errors.map((e) => (e.nodes || !e.locations?.length ? e : new GraphQLError(e.message, {
    source, positions: e.locations.map((l) => positionOf(source.body, l)), path: e.path, originalError: e.originalError, extensions: e.extensions,
  })));
  return { ...result, errors };
}

/** The offset in `body` of a line and column as graphql-js counts them (lines end at \r\n, \n or \r). */
function positionOf(body: string, { line, column }: SourceLocation): number {
  let start = 0;
  const ends = /\r\n|[\n\r]/g;
  for (let l = 1; l < line; l++) {
    const m = ends.exec(body);
    if (!m) break;
    start = m.index + m[0].length;
  }
  return start + column - 1;
}

export function useCompiledQueries(): Plugin {
  return {
    onExecute({ args, setExecuteFn }) {
      const c = compiledFor(args);
      if (!c) return;
      const source = args.document.loc?.source;
      setExecuteFn(((a: ExecutionArgs) => {
        const r = c.query(a.rootValue, a.contextValue, a.variableValues ?? {});
        return r instanceof Promise ? r.then((x) => located(x, source)) : located(r as ExecutionResult, source);
      }) as any);
    },
  };
}
