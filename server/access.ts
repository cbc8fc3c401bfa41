import { GraphQLError, Kind, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode, type GraphQLField } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Actor, Role } from '../domain/access.js';
import type { Context } from '../resolvers/context.js';

const READERS: Role[] = ['reader', 'plugin', 'admin'];

/** The operations of each document by name ('' for the first), found once (documents are immutable and cached by Yoga). */
const operationsOf = new WeakMap<DocumentNode, Map<string, OperationDefinitionNode | undefined>>();

/** The operation `name` of the document (without a name: its first), as graphql-js picks it. */
export function operationOf(doc: DocumentNode, name?: string | null): OperationDefinitionNode | undefined {
  let byName = operationsOf.get(doc);
  if (!byName) operationsOf.set(doc, (byName = new Map()));
  const key = name ?? '';
  if (byName.has(key)) return byName.get(key);
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const op = name ? ops.find((o) => o.name?.value === name) : ops[0];
  byName.set(key, op);
  return op;
}

function rootFields(doc: DocumentNode, sel: SelectionSetNode, out = new Set<string>(), seen = new Set<string>()): Set<string> {
  const frags = new Map(doc.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]));
  for (const s of sel.selections) {
    if (s.kind === Kind.FIELD) out.add(s.name.value);
    else if (s.kind === Kind.INLINE_FRAGMENT) rootFields(doc, s.selectionSet, out, seen);
    else if (!seen.has(s.name.value)) {
      seen.add(s.name.value);
      const f = frags.get(s.name.value);
      if (f) rootFields(doc, f.selectionSet, out, seen);
    }
  }
  return out;
}

/** The root field names of each operation (fragments followed), found once per operation. */
const rootFieldsOf = new WeakMap<OperationDefinitionNode, string[]>();

/**
 * The first root field of this operation the caller may not use, and why; null when it may use all.
 * A field's `extensions.roles` lists the roles that may call it (default: the readers); a field with
 * `extensions.instanceWide` changes something of the whole instance and needs an unscoped token.
 */
export function forbiddenUse(schema: GraphQLSchema, doc: DocumentNode, operationName: string | null | undefined, actor: Pick<Actor, 'role' | 'directory'>): { field: string; message: string } | null {
  const op = operationOf(doc, operationName);
  if (!op) return null;
  const type = op.operation === 'query' ? schema.getQueryType() : op.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
  if (!type) return null;
  const fields = type.getFields();
  let names = rootFieldsOf.get(op);
  if (!names) rootFieldsOf.set(op, (names = [...rootFields(doc, op.selectionSet)]));
  for (const name of names) {
    if (name.startsWith('__')) continue;
    const field = fields[name] as GraphQLField<unknown, unknown> | undefined;
    if (!field) continue; // validation reports unknown fields
    const ext = (field.extensions ?? {}) as { roles?: Role[]; instanceWide?: boolean };
    const roles = ext.roles ?? READERS;
    if (!roles.includes(actor.role)) return { field: name, message: `The ${actor.role} role may not use ${name}.` };
    if (ext.instanceWide && actor.directory !== null) {
      return { field: name, message: `${name} changes the whole instance: it needs an unscoped token (this one is scoped to ${actor.directory}).` };
    }
  }
  return null;
}

/**
 * Role check before anything executes: an operation with a root field the caller's role may not call
 * (or an instance-wide one, with a scoped token) is answered with a FORBIDDEN error and none of its
 * fields run. Same hook for HTTP and WebSocket.
 */
export function useRoles(): Plugin<Context> {
  const check = (args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null; contextValue: Context }) => {
    const no = forbiddenUse(args.schema, args.document, args.operationName, args.contextValue.actor);
    return no ? new GraphQLError(no.message, { extensions: { code: 'FORBIDDEN' } }) : null;
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const err = check(args as any);
      if (err) setResultAndStopExecution({ errors: [err] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const err = check(args as any);
      if (err) setResultAndStopExecution({ errors: [err] });
    },
  };
}
