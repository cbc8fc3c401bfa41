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

/**
 * Why a request's bearer token was not accepted, which is all an anonymous caller learns: none was sent, what
 * was sent is no gateway token (not `Bearer <token>`, or not of a token's form), or a token of the right form
 * that this gateway does not accept (never created here, or revoked: the two are not told apart, and no
 * token ID is named). Gateway tokens do not expire. The error's code stays `UNAUTHENTICATED` (HTTP 401; a
 * WebSocket is closed with 4403); `extensions.reason` carries this.
 */
export type Refusal = 'MISSING' | 'MALFORMED' | 'REFUSED';

/** The form of every secret `gateway token create` and `createToken` make (domain/tokens.ts). */
const TOKEN_FORM = /^gw_[A-Za-z0-9_-]{32}$/;
const MAKE_ONE = 'gateway token create --role reader (or plugin, host, admin)';

/** Why `header` (an Authorization header, or a WebSocket's connectionParams value) was refused. */
export function refusalOf(header: unknown): Refusal {
  if (typeof header !== 'string' || !header.trim()) return header == null || header === '' ? 'MISSING' : 'MALFORMED';
  const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return m && TOKEN_FORM.test(m[1]) ? 'REFUSED' : 'MALFORMED';
}

/** The message of a refusal over HTTP (and SSE): what it was and the command that makes a token. */
export const REFUSAL_MESSAGES: Record<Refusal, string> = {
  MISSING: `A bearer token is required: send "Authorization: Bearer <token>". Make one where the gateway runs: ${MAKE_ONE}.`,
  MALFORMED: 'This is not a gateway token: send "Authorization: Bearer gw_…" with the whole token that gateway token create printed (not its tok_… ID).',
  REFUSED: `The gateway refused this token: it is unknown or revoked. Make a new one where the gateway runs (with its data folder or DATABASE_URL): ${MAKE_ONE}.`,
};

/** The close reason of a refused WebSocket (4403): the same, within a close frame's 123 bytes. */
export const REFUSAL_CLOSE_REASONS: Record<Refusal, string> = {
  MISSING: 'Forbidden: no token (connectionParams: {"Authorization": "Bearer <token>"})',
  MALFORMED: 'Forbidden: not a gateway token (Bearer gw_…, as gateway token create printed it)',
  REFUSED: 'Forbidden: token unknown or revoked; make one: gateway token create --role <role>',
};

/** The close reason of a WebSocket whose token was revoked while it was open (4401). */
export const REVOKED_CLOSE_REASON = 'Unauthorized: token revoked; make one: gateway token create --role <role>';

/** The whole HTTP answer to a refused request: 401, `WWW-Authenticate: Bearer`, GraphQL JSON. */
export function refusalResponse(reason: Refusal): { status: number; headers: Record<string, string>; body: string } {
  return {
    status: 401,
    headers: { 'content-type': 'application/json', 'www-authenticate': reason === 'MISSING' ? 'Bearer' : 'Bearer error="invalid_token"' },
    body: REFUSAL_BODIES[reason],
  };
}
const REFUSAL_BODIES = Object.fromEntries((Object.keys(REFUSAL_MESSAGES) as Refusal[]).map((r) => [r, JSON.stringify({
  errors: [{ message: REFUSAL_MESSAGES[r], extensions: { code: 'UNAUTHENTICATED', reason: r } }],
})])) as Record<Refusal, string>;
