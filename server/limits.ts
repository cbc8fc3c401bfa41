import { GraphQLError, Kind, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
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

/** Depth, alias, token and cost limits, as envelop plugins: they run for HTTP and WebSocket alike. */
export function useLimits(limits: Limits = DEFAULT_LIMITS): [armor: Plugin, cost: Plugin] {
  const armor = EnvelopArmorPlugin({
    maxDepth: { n: limits.maxDepth, ignoreIntrospection: true },
    maxAliases: { n: limits.maxAliases },
    maxTokens: { n: limits.maxTokens },
    maxDirectives: { n: 20 },
    costLimit: { enabled: false },
    blockFieldSuggestion: { enabled: true },
  });
  const cost: Plugin = {
    onExecute({ args, setResultAndStopExecution }) {
      const c = operationCost(args.document, args.operationName, (args.variableValues ?? {}) as any);
      if (c > limits.maxCost) {
        setResultAndStopExecution({
          errors: [new GraphQLError(`The operation may return up to ${c} objects; the limit is ${limits.maxCost}. Ask for smaller pages.`, { extensions: { code: 'COST_LIMIT' } })],
        });
      }
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const c = operationCost(args.document, args.operationName, (args.variableValues ?? {}) as any);
      if (c > limits.maxCost) {
        setResultAndStopExecution({
          errors: [new GraphQLError(`The operation may return up to ${c} objects; the limit is ${limits.maxCost}.`, { extensions: { code: 'COST_LIMIT' } })],
        });
      }
    },
  };
  return [armor as Plugin, cost];
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
