import { GraphQLError, Kind, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode, type GraphQLField } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Role } from '../domain/access.js';
import type { Context } from '../resolvers/context.js';

const READERS: Role[] = ['reader', 'plugin', 'admin'];

function operationOf(doc: DocumentNode, name?: string | null): OperationDefinitionNode | undefined {
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return name ? ops.find((o) => o.name?.value === name) : ops[0];
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

/** The roles that may call each root field of this operation; null when all may. */
export function forbiddenField(schema: GraphQLSchema, doc: DocumentNode, operationName: string | null | undefined, role: Role): string | null {
  const op = operationOf(doc, operationName);
  if (!op) return null;
  const type = op.operation === 'query' ? schema.getQueryType() : op.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
  if (!type) return null;
  const fields = type.getFields();
  for (const name of rootFields(doc, op.selectionSet)) {
    if (name.startsWith('__')) continue;
    const field = fields[name] as GraphQLField<unknown, unknown> | undefined;
    if (!field) continue; // validation reports unknown fields
    const roles = ((field.extensions as any)?.roles as Role[] | undefined) ?? READERS;
    if (!roles.includes(role)) return name;
  }
  return null;
}

/**
 * Role check before anything executes: an operation with a root field the caller's role may not call
 * is answered with a FORBIDDEN error and none of its fields run. Same hook for HTTP and WebSocket.
 */
export function useRoles(): Plugin<Context> {
  const check = (args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null; contextValue: Context }) => {
    const field = forbiddenField(args.schema, args.document, args.operationName, args.contextValue.actor.role);
    return field
      ? new GraphQLError(`The ${args.contextValue.actor.role} role may not use ${field}.`, { extensions: { code: 'FORBIDDEN' } })
      : null;
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
