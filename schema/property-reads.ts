import { isObjectType, type GraphQLSchema } from 'graphql';
import { edgeTypeNames } from './connection.js';

/**
 * A resolver that only reads its parent's property of the field's own name, `(e) => e.status` (a
 * Pothos `t.field` whose type needs no mapping, the relay plugin's `edges` and `pageInfo`), is dropped
 * from the schema: graphql-js's default resolver reads the same property, and graphql-jit
 * (resolvers/compiled.ts) then reads it inline in the compiled query instead of calling a resolver,
 * with its resolve info and promise check, for every field of every row of a page. A resolver that
 * does anything else (another property, a default, a load: plugin wrappers such as the dataloader's
 * never have this shape) is kept. The parents of these fields are rows and plain objects, which hold
 * no functions (the default resolver would call one). Returns the fields it changed.
 */
const PROPERTY_READ = /^\(?\s*([A-Za-z_$][\w$]*)\s*\)?\s*=>\s*\1\.([A-Za-z_$][\w$]*)$/;

export function dropPropertyReadResolvers(schema: GraphQLSchema): string[] {
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(Boolean));
  const changed: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__') || roots.has(type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (!field.resolve || field.subscribe) continue;
      const m = PROPERTY_READ.exec(Function.prototype.toString.call(field.resolve).trim());
      if (m && m[2] === field.name) {
        field.resolve = undefined;
        changed.push(`${type.name}.${field.name}`);
      }
    }
  }
  return changed;
}

/**
 * The `node` of every connection edge (schema/connection.ts edgeTypeNames) is the row its page holds.
 * Its resolver is the relay plugin's `(edge) => edge.node` inside @pothos/plugin-dataloader's wrapper,
 * which would load the node if it were an ID: it never is, so the wrapper (a context-cache lookup per
 * edge) and, in a compiled query, the resolver call per edge (resolve info, path, closures: about a
 * sixth of what a page of sessions with their executions allocated) go, and the row is read as a
 * property. Returns the fields it changed.
 */
export function readEdgeNodesAsRows(schema: GraphQLSchema): string[] {
  const changed: string[] = [];
  for (const name of edgeTypeNames) {
    const type = schema.getType(name);
    const node = isObjectType(type) ? type.getFields().node : undefined;
    if (!node) throw new Error(`connection edge type ${name} has no node field`);
    if (!node.resolve) continue;
    node.resolve = undefined;
    changed.push(`${name}.node`);
  }
  return changed;
}
