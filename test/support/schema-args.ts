import {
  getNamedType, getNullableType, isEnumType, isInputObjectType, isLeafType, isListType, isNonNullType, isUnionType,
  type GraphQLArgument, type GraphQLField, type GraphQLInputType, type GraphQLSchema,
} from 'graphql';

/**
 * Root-field calls generated from the schema itself: every root field of Query, Mutation
 * and Subscription, with every argument and every input field (optional ones included) given a
 * schema-valid value, and the list of every string position in them (String and ID values, strings
 * and object keys inside JSON values). A field added to the schema is covered without touching this.
 */

export type OperationKind = 'query' | 'mutation' | 'subscription';
export type Path = (string | number)[];
/**
 * A string position of a generated call; `key`: the bad string goes into an object key of a JSON value at
 * `path`; `report`: the position the gateway names (a JSON value as a whole), when not `path` itself.
 */
/**
 * `rejectedByScalar`: a position of a scalar whose own parser refuses any string that is not its format (DateTime):
 * a bad byte there is refused by GraphQL's input coercion before anything runs, like any malformed value of it.
 */
export interface Leaf { path: Path; key?: boolean; literal: boolean; report?: Path; rejectedByScalar?: string }

export interface RootCall {
  operation: OperationKind;
  field: GraphQLField<unknown, unknown>;
  args: Record<string, unknown>;
  leaves: Leaf[];
  /** A mutation whose result union has InvalidRequestError. */
  typedInvalid: boolean;
}

export function rootFields(schema: GraphQLSchema): { operation: OperationKind; field: GraphQLField<unknown, unknown> }[] {
  const out: { operation: OperationKind; field: GraphQLField<unknown, unknown> }[] = [];
  for (const [operation, type] of [['query', schema.getQueryType()], ['mutation', schema.getMutationType()], ['subscription', schema.getSubscriptionType()]] as const) {
    for (const field of Object.values(type?.getFields() ?? {})) out.push({ operation, field });
  }
  return out;
}

export function hasInvalidRequestMember(field: GraphQLField<unknown, unknown>): boolean {
  const t = getNullableType(field.type);
  return isUnionType(t) && t.getTypes().some((m) => m.name === 'InvalidRequestError');
}

/** A plausible string for a position: real IDs where the name says which kind, absolute directories. */
export type StringFor = (name: string, path: Path) => string;

function sample(type: GraphQLInputType, name: string, path: Path, leaves: Leaf[], str: StringFor, depth: number): unknown {
  if (isNonNullType(type)) return sample(type.ofType, name, path, leaves, str, depth);
  if (isListType(type)) return [sample(type.ofType, name, [...path, 0], leaves, str, depth)];
  if (isInputObjectType(type)) {
    const obj: Record<string, unknown> = {};
    if (depth > 6) return obj;
    for (const f of Object.values(type.getFields())) obj[f.name] = sample(f.type, f.name, [...path, f.name], leaves, str, depth + 1);
    return obj;
  }
  if (isEnumType(type)) return type.getValues()[0].name;
  switch (type.name) {
    case 'String':
    case 'ID':
      leaves.push({ path, literal: true });
      return str(name, path);
    case 'Int': return 1;
    case 'Float': return 1;
    case 'Boolean': return false;
    case 'JSON':
      leaves.push({ path: [...path, 'note'], literal: true, report: path }, { path, key: true, literal: false });
      return { note: 'fine' };
    case 'DateTime':
      leaves.push({ path, literal: true, rejectedByScalar: 'DateTime' });
      return '2026-01-01T00:00:00.000Z';
    default:
      throw new Error(`schema-args: no sample for scalar ${type.name}`);
  }
}

export function generateCall(operation: OperationKind, field: GraphQLField<unknown, unknown>, str: StringFor): RootCall {
  const leaves: Leaf[] = [];
  const args: Record<string, unknown> = {};
  for (const a of field.args) args[a.name] = sample(a.type, a.name, [a.name], leaves, str, 0);
  return { operation, field, args, leaves, typedInvalid: operation === 'mutation' && hasInvalidRequestMember(field) };
}

/** A deep copy of `args` with `bad` put at the leaf (as the string there, or as an object key). */
export function inject(args: Record<string, unknown>, leaf: Leaf, bad: string): Record<string, unknown> {
  const copy = structuredClone(args);
  let at: any = copy;
  for (const p of leaf.path.slice(0, -1)) at = at[p];
  const last = leaf.path.at(-1)!;
  if (leaf.key) at[last] = { [bad]: 'value' };
  else at[last] = bad;
  return copy;
}

/** How the gateway names a position in its InvalidRequestError: `parts[0].text` (inside `input`), or the argument's path. */
export function fieldPath(leaf: Leaf): string {
  let s = '';
  for (const p of leaf.report ?? leaf.path) s += typeof p === 'number' ? `[${p}]` : s === '' ? p : `.${p}`;
  return s.startsWith('input.') ? s.slice('input.'.length) : s;
}

function literal(type: GraphQLInputType, value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (isNonNullType(type)) return literal(type.ofType, value);
  if (isListType(type)) return `[${(value as unknown[]).map((v) => literal(type.ofType, v)).join(', ')}]`;
  if (isInputObjectType(type)) {
    const fields = type.getFields();
    return `{ ${Object.entries(value as object).map(([k, v]) => `${k}: ${literal(fields[k].type, v)}`).join(', ')} }`;
  }
  if (isEnumType(type)) return String(value);
  if (type.name === 'JSON') return jsonLiteral(value);
  if (typeof value === 'string') return JSON.stringify(value); // JSON escapes (\u0000, \ud800) are GraphQL escapes too
  return String(value);
}

function jsonLiteral(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(jsonLiteral).join(', ')}]`;
  if (v !== null && typeof v === 'object') return `{ ${Object.entries(v).map(([k, x]) => `${k}: ${jsonLiteral(x)}`).join(', ')} }`;
  return JSON.stringify(v);
}

function selection(call: RootCall): string {
  if (isLeafType(getNamedType(call.field.type))) return '';
  return `{ __typename${call.typedInvalid ? ' ... on InvalidRequestError { field }' : ''} }`;
}

/** The request for a call: its arguments as variables, or inline as literals. */
export function renderCall(call: RootCall, args: Record<string, unknown>, mode: 'variables' | 'literal'): { query: string; variables: Record<string, unknown> } {
  const name = call.field.name;
  const list = call.field.args as readonly GraphQLArgument[];
  if (mode === 'variables') {
    const defs = list.map((a) => `$${a.name}: ${String(a.type)}`).join(', ');
    const uses = list.map((a) => `${a.name}: $${a.name}`).join(', ');
    return {
      query: `${call.operation}${defs ? `(${defs})` : ''} { ${name}${uses ? `(${uses})` : ''} ${selection(call)} }`,
      variables: args,
    };
  }
  const uses = list.map((a) => `${a.name}: ${literal(a.type, args[a.name])}`).join(', ');
  return { query: `${call.operation} { ${name}${uses ? `(${uses})` : ''} ${selection(call)} }`, variables: {} };
}
