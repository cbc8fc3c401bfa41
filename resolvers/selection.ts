import { getArgumentValues, isAbstractType, isObjectType, Kind, type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, type GraphQLSchema, type NamedTypeNode, type ValueNode } from 'graphql';

/**
 * Walking a field's selection: what resolvers/plans.ts plans a read from. Fragments (named and inline)
 * are followed; `@include`/`@skip` are not evaluated, so a plan covers a superset of what runs (what it
 * brings along for a skipped field is not used).
 */

export type Fragments = Record<string, FragmentDefinitionNode>;
/** An operation's fragments and the schema: what a selection is walked with (a resolver's info has both). */
export interface Operation { fragments: Fragments; schema: GraphQLSchema }

/**
 * The fields selected directly under these field nodes (by field name, aliases merged), through fragments.
 * With `typeName`, only the fragments that apply to an object of that type (a field of a result union
 * selects its error members' fields in fragments of their own).
 */
export function selectedFields(op: Operation, nodes: readonly FieldNode[], typeName?: string): Map<string, FieldNode[]> {
  const out = new Map<string, FieldNode[]>();
  const seen = new Set<string>();
  const applies = (on: NamedTypeNode | undefined) => !typeName || !on || appliesTo(op.schema, on.name.value, typeName);
  const walk = (selections: FieldNode['selectionSet']) => {
    if (!selections) return;
    for (const s of selections.selections) {
      if (s.kind === Kind.FIELD) {
        const name = s.name.value;
        const list = out.get(name);
        if (list) list.push(s);
        else out.set(name, [s]);
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        if (applies(s.typeCondition)) walk(s.selectionSet);
      } else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const fragment = op.fragments[s.name.value];
        if (fragment && applies(fragment.typeCondition)) walk(fragment.selectionSet);
      }
    }
  };
  for (const n of nodes) walk(n.selectionSet);
  return out;
}

/** Whether a fragment on type `condition` applies to an object of type `typeName` (the type, or a union or interface of it). */
function appliesTo(schema: GraphQLSchema, condition: string, typeName: string): boolean {
  if (condition === typeName) return true;
  const abstract = schema.getType(condition);
  const object = schema.getType(typeName);
  return !!abstract && isAbstractType(abstract) && isObjectType(object) && schema.isSubType(abstract, object);
}

/** The field nodes reached from these by a path of field names (e.g. `edges`, `node` of a connection). */
export function fieldsAt(op: Operation, nodes: readonly FieldNode[], path: readonly string[]): FieldNode[] {
  let at: readonly FieldNode[] = nodes;
  for (const name of path) at = selectedFields(op, at).get(name) ?? [];
  return at as FieldNode[];
}

/**
 * These nodes of one field, when they select it in one way only: one response key, the same arguments
 * on each, no directive. Else null (several pages per parent, a condition): what the field resolves
 * is then not known before it runs.
 */
export function oneWay(nodes: readonly FieldNode[] | undefined): FieldNode[] | null {
  if (!nodes?.length) return null;
  const keys = new Set(nodes.map((n) => n.alias?.value ?? n.name.value));
  const printed = new Set(nodes.map((n) => JSON.stringify(n.arguments?.map((a) => [a.name.value, a.value]) ?? [], (k, v) => (k === 'loc' ? undefined : v))));
  return keys.size === 1 && printed.size === 1 && nodes.every((n) => !n.directives?.length) ? [...nodes] : null;
}

/**
 * The arguments of field `name` of type `typeName` as written on `node`, coerced (variables included),
 * or null when they are bad: the field's own resolver then answers them.
 */
export function argumentsOf(info: GraphQLResolveInfo, typeName: string, name: string, node: FieldNode): Record<string, unknown> | null {
  const literal = literalArgsOf.get(node);
  if (literal) return literal;
  const type = info.schema.getType(typeName);
  const def = isObjectType(type) ? type.getFields()[name] : undefined;
  if (!def) return null;
  try {
    const args = getArgumentValues(def, node, info.variableValues);
    // Arguments written out in the document (`first: 5`) are the same on every request: coerced once.
    if (!node.arguments?.some((a) => usesVariables(a.value))) literalArgsOf.set(node, args);
    return args;
  } catch {
    return null;
  }
}
const literalArgsOf = new WeakMap<FieldNode, Record<string, unknown>>();
function usesVariables(v: ValueNode): boolean {
  switch (v.kind) {
    case Kind.VARIABLE: return true;
    case Kind.LIST: return v.values.some(usesVariables);
    case Kind.OBJECT: return v.fields.some((f) => usesVariables(f.value));
    default: return false;
  }
}
