import { GraphQLError, Kind, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { DEFAULT_PAGE, MAX_PAGE } from '../resolvers/pagination.js';

export interface Limits {
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  /** Upper bound on the rows an operation can ask for: the product of page sizes along each path, summed. */
  maxCost: number;
}

export const DEFAULT_LIMITS: Limits = { maxDepth: 12, maxAliases: 30, maxTokens: 5_000, maxCost: 250_000 };

/**
 * Page-aware cost: every field costs 1 times the rows its parents can return; a field with a `first`
 * argument multiplies what is below it by that page size (DEFAULT_PAGE when absent).
 */
export function operationCost(doc: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown> = {}): number {
  const frags = new Map(doc.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]));
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const op = operationName ? ops.find((o) => o.name?.value === operationName) : ops[0];
  if (!op) return 0;
  const walk = (sel: SelectionSetNode, mult: number, depth: number, seen: Set<string>): number => {
    if (depth > 64) return Infinity;
    let cost = 0;
    for (const s of sel.selections) {
      if (s.kind === Kind.FIELD) {
        cost += mult;
        if (!s.selectionSet) continue;
        const firstArg = s.arguments?.find((a) => a.name.value === 'first');
        let page = 1;
        if (firstArg) {
          const v = firstArg.value;
          const n = v.kind === Kind.INT ? Number(v.value) : v.kind === Kind.VARIABLE ? Number(variables[v.name.value] ?? DEFAULT_PAGE) : DEFAULT_PAGE;
          page = Math.min(Math.max(Number.isFinite(n) ? n : DEFAULT_PAGE, 1), MAX_PAGE);
        } else if (['children', 'executions', 'messages', 'jobs', 'sessions', 'settlements'].includes(s.name.value)) {
          page = DEFAULT_PAGE;
        }
        cost += walk(s.selectionSet, mult * page, depth + 1, seen);
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        cost += walk(s.selectionSet, mult, depth, seen);
      } else {
        const f = frags.get(s.name.value);
        if (f && !seen.has(f.name.value)) cost += walk(f.selectionSet, mult, depth, new Set([...seen, f.name.value]));
      }
    }
    return cost;
  };
  return walk(op.selectionSet, 1, 0, new Set());
}

/** Directives in one operation (graphql-armor's rule; not configurable). */
export const MAX_DIRECTIVES = 20;
/** How often one response name may be selected in one selection set (fragments included): see useRepeatedFieldLimit. */
export const MAX_REPEATED_FIELDS = 100;

/**
 * A limit's error: `extensions.code` names the limit, `limit` is the number exceeded and `found` what the
 * operation has (when known), so a client can tell which limit it hit and by how much.
 */
export function limitError(code: string, message: string, limit: number, found?: number, extra: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, limit, ...(found === undefined ? {} : { found }), ...extra } });
}

/** What graphql-armor found, from its message ("… limit of 12 exceeded, found 14."): it hands its rejections over as text only. */
function foundIn(error: GraphQLError): number | undefined {
  const m = /found (\d+)/.exec(error.message);
  return m ? Number(m[1]) : undefined;
}

/**
 * graphql-armor's validation rules (depth, aliases, directives) report through this instead of throwing
 * their own error ("Syntax Error: …", no code): an error with the limit's code, beside the document's other
 * validation errors.
 */
function reportAs(code: string, describe: (found: number | undefined) => string, limit: number) {
  return (ctx: ValidationContext | null, error: GraphQLError) => {
    const found = foundIn(error);
    ctx?.reportError(limitError(code, describe(found), limit, found));
  };
}

/**
 * Depth, alias, directive, token, repeated-field and cost limits, as envelop plugins: they run for HTTP and
 * WebSocket alike, and each answers an error with its own `extensions.code` (DEPTH_LIMIT, ALIAS_LIMIT,
 * DIRECTIVE_LIMIT, TOKEN_LIMIT, REPEATED_FIELD_LIMIT, COST_LIMIT), the `limit` exceeded and what was `found`.
 */
export function useLimits(limits: Limits = DEFAULT_LIMITS): [armor: Plugin, cost: Plugin] {
  const armor = EnvelopArmorPlugin({
    maxDepth: {
      n: limits.maxDepth, ignoreIntrospection: true, propagateOnRejection: false,
      onReject: [reportAs('DEPTH_LIMIT', (found) => `The operation's depth is ${found ?? `over ${limits.maxDepth}`}; the limit is ${limits.maxDepth} (MAX_DEPTH).`, limits.maxDepth)],
    },
    maxAliases: {
      n: limits.maxAliases, propagateOnRejection: false,
      onReject: [reportAs('ALIAS_LIMIT', (found) => `The operation has ${found ?? `over ${limits.maxAliases}`} aliases; the limit is ${limits.maxAliases} (MAX_ALIASES).`, limits.maxAliases)],
    },
    maxDirectives: {
      n: MAX_DIRECTIVES, propagateOnRejection: false,
      onReject: [reportAs('DIRECTIVE_LIMIT', (found) => `The operation has ${found ?? `over ${MAX_DIRECTIVES}`} directives; the limit is ${MAX_DIRECTIVES}.`, MAX_DIRECTIVES)],
    },
    maxTokens: {
      n: limits.maxTokens,
      // Counted while parsing: thrown, so that the parser stops at the first token over the limit.
      onReject: [() => { throw limitError('TOKEN_LIMIT', `The operation has more than ${limits.maxTokens} tokens; the limit is ${limits.maxTokens} (MAX_TOKENS).`, limits.maxTokens); }],
    },
    costLimit: { enabled: false },
    // graphql-js' field suggestions ("Did you mean "sessions"?") are kept: every caller that reaches
    // validation has a token, and every role may read the schema anyway (introspection); a request without
    // a token is refused before its document is parsed.
    blockFieldSuggestion: { enabled: false },
  });
  const cost: Plugin = {
    onExecute({ args, setResultAndStopExecution }) {
      const c = operationCost(args.document, args.operationName, (args.variableValues ?? {}) as any);
      if (c > limits.maxCost) {
        setResultAndStopExecution({
          errors: [limitError('COST_LIMIT', `The operation may return up to ${c} objects; the limit is ${limits.maxCost} (MAX_COST). Ask for smaller pages.`, limits.maxCost, c)],
        });
      }
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const c = operationCost(args.document, args.operationName, (args.variableValues ?? {}) as any);
      if (c > limits.maxCost) {
        setResultAndStopExecution({
          errors: [limitError('COST_LIMIT', `The operation may return up to ${c} objects; the limit is ${limits.maxCost} (MAX_COST).`, limits.maxCost, c)],
        });
      }
    },
  };
  return [{ onPluginInit: ({ addPlugin }) => { addPlugin(armor as Plugin); addPlugin(useRepeatedFieldLimit()); } }, cost];
}

/**
 * The most often one response name is selected in one selection set (its inline fragments and fragment
 * spreads included: what graphql-js compares pairwise), and which name.
 */
export function mostRepeatedField(doc: DocumentNode): { name: string; count: number } {
  const frags = new Map(doc.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]));
  let most = { name: '', count: 0 };
  const counted = new WeakSet<SelectionSetNode>();
  /** Adds the fields of `sel` (through its fragments) to `counts`; each nested selection set is counted on its own. */
  const collect = (sel: SelectionSetNode, counts: Map<string, number>, seen: Set<string>) => {
    for (const s of sel.selections) {
      if (s.kind === Kind.FIELD) {
        const key = s.alias?.value ?? s.name.value;
        const n = (counts.get(key) ?? 0) + 1;
        counts.set(key, n);
        if (n > most.count) most = { name: key, count: n };
        if (s.selectionSet) visit(s.selectionSet);
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        collect(s.selectionSet, counts, seen);
      } else if (!seen.has(s.name.value)) {
        const f = frags.get(s.name.value);
        if (f) collect(f.selectionSet, counts, new Set([...seen, s.name.value]));
      }
    }
  };
  const visit = (sel: SelectionSetNode) => {
    if (counted.has(sel)) return;
    counted.add(sel);
    collect(sel, new Map(), new Set());
  };
  for (const d of doc.definitions) if (d.kind === Kind.OPERATION_DEFINITION) visit(d.selectionSet);
  return most;
}

/**
 * REPEATED_FIELD_LIMIT: one response name selected more than MAX_REPEATED_FIELDS times in one selection set
 * (`{ __typename __typename … }` a thousand times) is refused before graphql-js validates the document.
 * graphql-js compares such fields pairwise and, past its budget, answers only "Validation aborted.": that
 * answer, for a document under this limit that still exhausts the budget (the same fields repeated at
 * several levels), is replaced by one that says what happened (VALIDATION_BUDGET).
 */
export function useRepeatedFieldLimit(max = MAX_REPEATED_FIELDS): Plugin {
  const verdicts = new WeakMap<DocumentNode, GraphQLError | null>();
  return {
    onValidate({ params, setResult }) {
      let verdict = verdicts.get(params.documentAST);
      if (verdict === undefined) {
        const most = mostRepeatedField(params.documentAST);
        verdict = most.count > max
          ? limitError('REPEATED_FIELD_LIMIT', `The field "${most.name}" is selected ${most.count} times in one selection set; the limit is ${max}. Select each field once.`, max, most.count, { field: most.name })
          : null;
        verdicts.set(params.documentAST, verdict);
      }
      if (verdict) {
        setResult([verdict]);
        return;
      }
      return ({ result, setResult: replace }) => {
        if (!result.some(isValidationAborted)) return;
        replace(result.map((e) => (isValidationAborted(e)
          ? new GraphQLError('The operation is too costly to validate: graphql-js gave up comparing the fields it selects under the same name (it compares them pairwise, here too often, at several levels). Select each field once per selection set.', { extensions: { code: 'VALIDATION_BUDGET' } })
          : e)));
      };
    },
  };
}

/** graphql-js' error when a rule ran out of its budget (`validationAbortedError`, not exported by name). */
function isValidationAborted(e: Error): boolean {
  return e instanceof GraphQLError && e.message === 'Validation aborted.' && !e.extensions?.code && !e.nodes?.length;
}

/** The largest request body the gateway reads (Yoga's default). */
export const MAX_REQUEST_BODY_BYTES = 25_000_000;

function bodyTooLarge(): GraphQLError {
  return new GraphQLError('Request body too large', { extensions: { code: 'REQUEST_ENTITY_TOO_LARGE', http: { status: 413 } } });
}

/**
 * The request body limit, in place of Yoga's own (`maxRequestBodySize: false` where this plugin is
 * given), with its answers: 413 REQUEST_ENTITY_TOO_LARGE, 400 for a Content-Length that is not one
 * number. A body with a Content-Length within the limit is read as it is: Node's HTTP parser reads
 * exactly that many bytes as the body (and refuses a request with both a Content-Length and a
 * Transfer-Encoding), so only a body without one (chunked) is counted as it streams. Yoga's own counts
 * every body through a TransformStream, a stream pipeline and the AbortController the pipeline aborts
 * when done (a DOMException with its stack), a tenth of the server's work on a small read. Given last
 * among the plugins, as Yoga places its own: after the request parsers, so it wraps the one chosen.
 */
export function useRequestBodyLimit(limit = MAX_REQUEST_BODY_BYTES): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      const length = request.headers.get('content-length');
      if (length !== null) {
        if (!/^\d+$/.test(length)) throw new GraphQLError('Content-Length header is invalid.', { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
        if (Number(length) > limit) throw bodyTooLarge();
        return;
      }
      if (!requestParser || !request.body) return;
      const parse = requestParser;
      setRequestParser((req) => parse(countedBody(req, limit, fetchAPI)));
    },
  };
}

/** The request with its body counted as it streams, failing past `limit` bytes (as Yoga's limit does). */
function countedBody(request: Request, limit: number, fetchAPI: { Request: typeof Request; TransformStream: typeof TransformStream }): Request {
  const body = request.body!;
  // A native stream takes the native TransformStream, a ponyfilled one the ponyfill's (as Yoga does).
  const Transform = body instanceof ReadableStream ? globalThis.TransformStream : fetchAPI.TransformStream;
  let read = 0;
  const counted = body.pipeThrough(new Transform<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      read += chunk.byteLength;
      if (read > limit) controller.error(bodyTooLarge());
      else controller.enqueue(chunk);
    },
  }));
  return new fetchAPI.Request(request.url, { method: request.method, headers: request.headers, signal: request.signal, body: counted, duplex: 'half' } as RequestInit);
}
