import {
  BREAK, GraphQLError, Kind, visit, getNullableType, isInputObjectType, isLeafType, isListType, isNonNullType, isUnionType,
  type ArgumentNode, type GraphQLInputType, type DirectiveNode, type DocumentNode, type FieldNode, type FragmentDefinitionNode, type GraphQLField,
  type GraphQLSchema, type SelectionSetNode, type ValueNode, type VariableDefinitionNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { wrapOrThrow } from '@pothos/plugin-errors';
import { InvalidRequestError } from '../domain/errors.js';
import { operationOf } from './access.js';

/**
 * Bad bytes: a NUL character or a lone UTF-16 surrogate in any string of a request's
 * arguments (inline literals, variables, nested input objects, lists, JSON scalars, object keys) is
 * refused before any resolver runs, so it never reaches SQL (Postgres refuses NUL in text and jsonb,
 * and a lone surrogate would be stored as U+FFFD or refused in jsonb).
 *
 * - A mutation root field whose result union has `InvalidRequestError`, with the bad string in its own
 *   arguments, answers `InvalidRequestError { field }` (the path inside `input`, e.g. `parts[0].text`);
 *   its resolver never runs, the operation's other root fields run as usual.
 * - Anything else (queries, subscriptions, mutations without that member, arguments of nested fields)
 *   is a GraphQL error with `extensions.code: BAD_USER_INPUT` and nothing of the operation runs.
 *
 * The check walks the operation's syntax and the raw variable values, so it covers every argument of
 * every field generically; no resolver has to remember it.
 */

const isWellFormed = (String.prototype as unknown as { isWellFormed: () => boolean }).isWellFormed; // Node >= 20

/** True when `s` has a NUL or a UTF-16 surrogate that is not half of a pair (both native scans). */
export function isBadString(s: string): boolean {
  return s.includes('\u0000') || !isWellFormed.call(s);
}

const MESSAGE = 'must not contain NUL characters or unpaired UTF-16 surrogates';

/** The path of the first bad string (or object key) in a variable's JSON value, or null. Iterative: any depth. */
function badInJson(value: unknown, path: string): string | null {
  const stack: [unknown, string][] = [[value, path]];
  while (stack.length) {
    const [v, p] = stack.pop()!;
    if (typeof v === 'string') {
      if (isBadString(v)) return p;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${p}[${i}]`]);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (const [k] of entries) if (isBadString(k)) return p; // a bad key: name the object, never echo the key
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i][1], `${p}.${entries[i][0]}`]);
    }
  }
  return null;
}

interface Scan {
  variables: Record<string, unknown>;
  defaults: Map<string, ValueNode>;
  fragments: Map<string, FragmentDefinitionNode>;
}

function badInLiteral(node: ValueNode, path: string, scan: Scan): string | null {
  switch (node.kind) {
    case Kind.STRING:
      return isBadString(node.value) ? path : null;
    case Kind.LIST:
      for (let i = 0; i < node.values.length; i++) {
        const r = badInLiteral(node.values[i], `${path}[${i}]`, scan);
        if (r) return r;
      }
      return null;
    case Kind.OBJECT:
      for (const f of node.fields) {
        const r = badInLiteral(f.value, `${path}.${f.name.value}`, scan);
        if (r) return r;
      }
      return null;
    case Kind.VARIABLE: {
      const name = node.name.value;
      if (Object.prototype.hasOwnProperty.call(scan.variables, name)) return badInJson(scan.variables[name], path);
      const d = scan.defaults.get(name);
      return d ? badInLiteral(d, path, scan) : null;
    }
    default:
      return null;
  }
}

/**
 * The same walk with the argument's input type (root fields): the path names input fields and list
 * items down to a scalar, never into a JSON value (a bad string anywhere in `metadata` is `metadata`),
 * as the domain's own validation names them.
 */
function badTyped(node: ValueNode | null, raw: { value: unknown } | null, type: GraphQLInputType, path: string, scan: Scan): string | null {
  if (node?.kind === Kind.VARIABLE) {
    const name = node.name.value;
    if (Object.prototype.hasOwnProperty.call(scan.variables, name)) return badTyped(null, { value: scan.variables[name] }, type, path, scan);
    const d = scan.defaults.get(name);
    return d ? badTyped(d, null, type, path, scan) : null;
  }
  if (isNonNullType(type)) return badTyped(node, raw, type.ofType, path, scan);
  if (isListType(type)) {
    const items: [ValueNode | null, { value: unknown } | null][] = node
      ? node.kind === Kind.LIST ? node.values.map((v) => [v, null]) : [[node, null]]
      : Array.isArray(raw!.value) ? raw!.value.map((v) => [null, { value: v }]) : [[null, raw]];
    const single = node ? node.kind !== Kind.LIST : !Array.isArray(raw!.value);
    for (let i = 0; i < items.length; i++) {
      const r = badTyped(items[i][0], items[i][1], type.ofType, single ? path : `${path}[${i}]`, scan);
      if (r) return r;
    }
    return null;
  }
  if (isInputObjectType(type)) {
    const fields = type.getFields();
    if (node) {
      if (node.kind !== Kind.OBJECT) return badInLiteral(node, path, scan);
      for (const f of node.fields) {
        const def = fields[f.name.value];
        const r = def ? badTyped(f.value, null, def.type, `${path}.${f.name.value}`, scan) : badInLiteral(f.value, `${path}.${f.name.value}`, scan);
        if (r) return r;
      }
      return null;
    }
    const v = raw!.value;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return badInJson(v, path);
    for (const [k, x] of Object.entries(v)) {
      if (isBadString(k)) return path;
      const def = fields[k];
      const r = def ? badTyped(null, { value: x }, def.type, `${path}.${k}`, scan) : badInJson(x, `${path}.${k}`);
      if (r) return r;
    }
    return null;
  }
  // A leaf: a String/ID is checked as is; a JSON value as a whole, named by its own position.
  const bad = node ? badInLiteral(node, path, scan) : badInJson(raw!.value, path);
  return bad && isLeafType(type) && type.name === 'JSON' ? path : bad;
}

function badInTypedArguments(field: GraphQLField<unknown, unknown> | undefined, args: readonly ArgumentNode[] | undefined, scan: Scan): string | null {
  if (!field) return badInArguments(args, scan);
  for (const a of args ?? []) {
    const def = field.args.find((x) => x.name === a.name.value);
    const r = def ? badTyped(a.value, null, def.type, a.name.value, scan) : badInLiteral(a.value, a.name.value, scan);
    if (r) return r;
  }
  return null;
}

function badInArguments(args: readonly ArgumentNode[] | undefined, scan: Scan): string | null {
  for (const a of args ?? []) {
    const r = badInLiteral(a.value, a.name.value, scan);
    if (r) return r;
  }
  return null;
}

function badInDirectives(dirs: readonly DirectiveNode[] | undefined, scan: Scan): string | null {
  for (const d of dirs ?? []) {
    const r = badInArguments(d.arguments, scan);
    if (r) return `@${d.name.value}(${r})`;
  }
  return null;
}

/** The first bad string anywhere below a selection set (arguments and directives of nested fields). */
function badInSelections(sel: SelectionSetNode | undefined, scan: Scan, seen: Set<string>): { field: string; path: string } | null {
  for (const s of sel?.selections ?? []) {
    const d = badInDirectives(s.directives, scan);
    if (d) return { field: s.kind === Kind.FIELD ? s.name.value : '...', path: d };
    if (s.kind === Kind.FIELD) {
      const a = badInArguments(s.arguments, scan);
      if (a) return { field: s.name.value, path: a };
      const r = badInSelections(s.selectionSet, scan, seen);
      if (r) return r;
    } else if (s.kind === Kind.INLINE_FRAGMENT) {
      const r = badInSelections(s.selectionSet, scan, seen);
      if (r) return r;
    } else if (!seen.has(s.name.value)) {
      seen.add(s.name.value);
      const r = badInSelections(scan.fragments.get(s.name.value)?.selectionSet, scan, seen);
      if (r) return r;
    }
  }
  return null;
}

/** Root fields of the operation, through root-level fragments. */
function rootFieldNodes(sel: SelectionSetNode, scan: Scan, out: FieldNode[] = [], seen = new Set<string>()): FieldNode[] {
  for (const s of sel.selections) {
    if (s.kind === Kind.FIELD) out.push(s);
    else if (s.kind === Kind.INLINE_FRAGMENT) rootFieldNodes(s.selectionSet, scan, out, seen);
    else if (!seen.has(s.name.value)) {
      seen.add(s.name.value);
      const f = scan.fragments.get(s.name.value);
      if (f) rootFieldNodes(f.selectionSet, scan, out, seen);
    }
  }
  return out;
}

/** Does this mutation field's result union have an InvalidRequestError member? */
function answersInvalidRequest(field: GraphQLField<unknown, unknown> | undefined): boolean {
  const t = field && getNullableType(field.type);
  return !!t && isUnionType(t) && t.getTypes().some((m) => m.name === 'InvalidRequestError');
}

export interface BadInput {
  /** The operation is refused as a whole (BAD_USER_INPUT). */
  error: GraphQLError | null;
  /** Root response key → the typed answer of that mutation field. */
  refusals: Map<string, InvalidRequestError>;
}

/** Whether a string literal anywhere in the document (arguments, defaults, directives, any operation) is bad; once per document. */
const badLiteralIn = new WeakMap<DocumentNode, boolean>();
function hasBadLiteral(document: DocumentNode): boolean {
  let v = badLiteralIn.get(document);
  if (v === undefined) {
    v = false;
    visit(document, { StringValue(node) { if (isBadString(node.value)) { v = true; return BREAK; } return undefined; } });
    badLiteralIn.set(document, v);
  }
  return v;
}

/** Checks one operation. Null when every string is fine. */
export function checkOperation(
  schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown> | null | undefined,
): BadInput | null {
  const op = operationOf(document, operationName);
  if (!op) return null;
  // Nothing to find when no string of the document and none of the variables is bad (the common case):
  // the walk below only says where a bad one is.
  if (!hasBadLiteral(document) && (variables == null || typeof variables !== 'object' || badInJson(variables, '') === null)) return null;
  const scan: Scan = {
    variables: variables && typeof variables === 'object' ? variables : {},
    defaults: new Map(
      (op.variableDefinitions ?? [])
        .filter((v): v is VariableDefinitionNode & { defaultValue: ValueNode } => !!v.defaultValue)
        .map((v) => [v.variable.name.value, v.defaultValue]),
    ),
    fragments: new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f])),
  };
  const refuse = (field: string, path: string) =>
    new GraphQLError(`Argument ${path} of ${field} ${MESSAGE}.`, { extensions: { code: 'BAD_USER_INPUT', field: path } });

  const opDirective = badInDirectives(op.directives, scan);
  if (opDirective) return { error: refuse(op.operation, opDirective), refusals: new Map() };
  // Anything below the root fields (and root-level fragment directives) can only be refused as a whole.
  const below = badInSelectionsBelowRoot(op.selectionSet, scan);
  if (below) return { error: refuse(below.field, below.path), refusals: new Map() };

  const rootType = op.operation === 'query' ? schema.getQueryType() : op.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
  const rootDefs = rootType?.getFields() ?? {};
  const refusals = new Map<string, InvalidRequestError>();
  for (const f of rootFieldNodes(op.selectionSet, scan)) {
    const def = rootDefs[f.name.value] as GraphQLField<unknown, unknown> | undefined;
    const path = badInTypedArguments(def, f.arguments, scan) ?? badInDirectives(f.directives, scan);
    if (!path) continue;
    const typed = !path.startsWith('@') && op.operation === 'mutation' && answersInvalidRequest(def);
    if (!typed) return { error: refuse(f.name.value, path), refusals: new Map() };
    const field = path.startsWith('input.') ? path.slice('input.'.length) : path;
    refusals.set(f.alias?.value ?? f.name.value, new InvalidRequestError(field, `${field} ${MESSAGE}.`));
  }
  return refusals.size ? { error: null, refusals } : null;
}

/** Bad strings in the selections of root fields, or in directives of root-level fragments. */
function badInSelectionsBelowRoot(sel: SelectionSetNode, scan: Scan, seen = new Set<string>()): { field: string; path: string } | null {
  for (const s of sel.selections) {
    if (s.kind === Kind.FIELD) {
      const r = badInSelections(s.selectionSet, scan, new Set());
      if (r) return r;
      continue;
    }
    const d = badInDirectives(s.directives, scan);
    if (d) return { field: '...', path: d };
    if (s.kind === Kind.INLINE_FRAGMENT) {
      const r = badInSelectionsBelowRoot(s.selectionSet, scan, seen);
      if (r) return r;
    } else if (!seen.has(s.name.value)) {
      seen.add(s.name.value);
      const f = scan.fragments.get(s.name.value);
      if (f) {
        const r = badInSelectionsBelowRoot(f.selectionSet, scan, seen);
        if (r) return r;
      }
    }
  }
  return null;
}

// ---- Typed answers: the refused mutation field resolves to its InvalidRequestError ---------------

const REFUSALS = new WeakMap<object, Map<string, unknown>>();
const GUARDED = new WeakSet<GraphQLSchema>();

/**
 * Once per schema: each mutation field whose result union has InvalidRequestError answers the
 * request's refusal for its response key instead of running its resolver. The refusal is wrapped as
 * the errors plugin wraps an error its resolvers throw (wrapOrThrow), so the union resolves it to
 * InvalidRequestError exactly as if the domain had thrown it.
 */
function guard(schema: GraphQLSchema) {
  if (GUARDED.has(schema)) return;
  GUARDED.add(schema);
  for (const field of Object.values(schema.getMutationType()?.getFields() ?? {})) {
    if (!answersInvalidRequest(field)) continue;
    const resolve = field.resolve;
    field.resolve = (source, args, context, info) => {
      const refusal = context && REFUSALS.get(context)?.get(String(info.path.key));
      if (refusal) return refusal;
      return resolve ? resolve(source, args, context, info) : (source as any)?.[info.fieldName];
    };
  }
}

/**
 * The envelop plugin (register it after the role check): HTTP and WebSocket operations alike.
 */
export function useInputValidation(): Plugin {
  const check = (args: any, stop: (r: { errors: GraphQLError[] }) => void) => {
    const bad = checkOperation(args.schema, args.document, args.operationName, args.variableValues);
    if (!bad) return;
    if (bad.error) return stop({ errors: [bad.error] });
    guard(args.schema);
    REFUSALS.set(args.contextValue, new Map([...bad.refusals].map(([key, e]) => [key, wrapOrThrow(e, [InvalidRequestError])])));
  };
  return {
    onSchemaChange({ schema }) { guard(schema); },
    onExecute({ args, setResultAndStopExecution }) { check(args, setResultAndStopExecution); },
    onSubscribe({ args, setResultAndStopExecution }) { check(args, setResultAndStopExecution); },
  };
}
