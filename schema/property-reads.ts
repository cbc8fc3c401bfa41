import { isObjectType, type GraphQLSchema } from 'graphql';

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
