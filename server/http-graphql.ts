import type { IncomingMessage, ServerResponse } from 'node:http';
import { getOperationAST, type ExecutionResult } from 'graphql';
import { processRegularResult, type YogaServerInstance } from 'graphql-yoga';
import { handleErrorFromRequestHandler, sendNodeResponse } from '@whatwg-node/server';
import type { Actor } from '../domain/access.js';
import { logUnexpected, reportUnexpected, type RequestRecord } from './logging.js';
import { errorBody } from './availability.js';

/**
 * The HTTP read path: a query sent as a plain JSON POST (`content-type: application/json`, a
 * Content-Length, no Origin, an Accept that Yoga answers with application/json) is run through the
 * very envelop pipeline Yoga runs (`yoga.getEnveloped`: the parse and validation caches, roles, input
 * validation, limits, error masking, compiled execution, the request record) without Yoga's fetch-API
 * layer around it: no Request/Response objects, body streams, abort signals or promise chains per hook,
 * which cost more CPU than the query itself.
 *
 * It answers only what it answers exactly as Yoga would (a query that parsed, validated and executed;
 * its result serialized by Yoga's own processRegularResult when it has errors). Everything else (another
 * method or media type, a body that is not a GraphQL params object, no or a bad token, a parse or
 * validation error, a mutation or subscription, an execution that throws) is handed to Yoga with the
 * body already read, and Yoga answers it as before. Queries never write, so handing one over after it
 * ran changes nothing but CPU. The attempt runs with a request record of its own, which replaces the
 * request's only when the fast path answers, so log lines and metrics count an operation once.
 */

const PARAMS = new Set(['query', 'operationName', 'variables', 'extensions']);
const CONTENT_LENGTH = /^\d+$/;
/** Yoga's default maxRequestBodySize (an over-long body is Yoga's 413). */
const MAX_BODY = 25_000_000;
const JSON_TYPE = /^application\/json\s*(;\s*charset=utf-8\s*)?$/i;
/** Accept headers Yoga answers with application/json (its result processors: the last match wins). */
const JSON_ACCEPT = /^\s*(\*\/\*|application\/json(\s*;\s*charset=utf-8)?)\s*$/i;

type Yoga = YogaServerInstance<any, any>;
type Params = { query: string; operationName?: string | null; variables?: Record<string, unknown> | null; extensions?: Record<string, unknown> | null };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether a request's headers make it one the fast path may answer (its body decides the rest). */
export function fastPathCandidate(req: IncomingMessage): boolean {
  const h = req.headers;
  if (req.method !== 'POST' || h.origin !== undefined || h['transfer-encoding'] !== undefined || h['content-encoding'] !== undefined) return false;
  const len = h['content-length'];
  if (len === undefined || !CONTENT_LENGTH.test(len) || Number(len) > MAX_BODY) return false;
  if (!JSON_TYPE.test(h['content-type'] ?? '')) return false;
  if (h.accept !== undefined && !JSON_ACCEPT.test(h.accept)) return false;
  // Node keeps the first of repeated Authorization / Accept / Content-Type headers, Yoga sees them joined.
  let repeated = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i].toLowerCase();
    if (k === 'authorization' || k === 'accept' || k === 'content-type' || k === 'content-length') repeated++;
  }
  return repeated <= (h.authorization === undefined ? 0 : 1) + (h.accept === undefined ? 0 : 1) + 2;
}

function paramsOf(text: string): Params | null {
  let body: unknown;
  try { body = JSON.parse(text); } catch { return null; }
  if (!isObject(body)) return null;
  for (const k in body) if (!PARAMS.has(k)) return null;
  const { query, operationName, variables, extensions } = body;
  if (typeof query !== 'string' || query === '') return null;
  if (operationName != null && typeof operationName !== 'string') return null;
  if (variables != null && !isObject(variables)) return null;
  if (extensions != null && !isObject(extensions)) return null;
  return body as Params;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.once('error', reject);
    req.once('close', () => { if (!req.complete) reject(new Error('request aborted')); });
  });
}

export interface HttpGraphQL {
  /**
   * Answers a POST /graphql (the fast path when it can, otherwise Yoga with the body already read);
   * `rec`: the request's record (server/logging.ts), filled by the operation that answers.
   */
  handle(req: IncomingMessage, res: ServerResponse, rec?: RequestRecord): Promise<void>;
  /** Requests answered by the fast path, and candidates handed over to Yoga after their body was read. */
  readonly counts: { fast: number; handedOver: number };
}

type Answer = { status: number; headers: Record<string, string>; body: string };

/**
 * `authenticate` and `unauthenticated`: what the app's auth hook does and answers without a valid token;
 * a failing lookup (the database away) is answered as guardRequestHooks answers it.
 */
export function httpGraphQL(yoga: Yoga, authenticate: (authorization: string | undefined) => Promise<Actor | null>, unauthenticated: Answer): HttpGraphQL {
  /** Yoga, given the request as it came (its body already read). */
  const viaYoga = async (req: IncomingMessage, res: ServerResponse, body: Buffer, rec: RequestRecord | undefined) => {
    const headers: [string, string][] = [];
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) headers.push([raw[i], raw[i + 1]]);
    const request = new yoga.fetchAPI.Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/graphql'}`, { method: req.method, headers, body: body as unknown as BodyInit });
    let response: Response;
    // As Yoga's own Node listener: a throw of the handler is a 500 (whatwg-node's), never an unhandled rejection.
    try { response = await yoga.handleRequest(request, { req, res, rec }); } catch (e) { response = handleErrorFromRequestHandler(e, yoga.fetchAPI.Response); }
    await sendNodeResponse(response, res, req, true);
  };

  /** The answer of the fast path, or null when Yoga is to answer. */
  const attempt = async (req: IncomingMessage, res: ServerResponse, body: Buffer, rec: RequestRecord | undefined): Promise<Answer | null> => {
    const params = paramsOf(body.toString());
    if (!params) return null;
    // Answered here as the auth hook answers them (server/app.ts), so a token is looked up once per request.
    let actor: Actor | null;
    try { actor = await authenticate(req.headers.authorization); } catch (e) { return errorBody(e); }
    if (!actor) return unauthenticated;
    // `request`: what Yoga's envelop hooks read of an HTTP request (the method: its after-parse hook codes
    // parse errors, in the cached error object, only for HTTP requests). Any other read of it throws,
    // and the request is handed over.
    const enveloped = yoga.getEnveloped({ req, res, params, actor, request: { method: 'POST' }, rec });
    let document;
    try { document = enveloped.parse(params.query); } catch { return null; }
    if (getOperationAST(document, params.operationName)?.operation !== 'query') return null;
    if (enveloped.validate(enveloped.schema, document).length) return null;
    let result: ExecutionResult;
    try {
      const contextValue = await enveloped.contextFactory();
      const r = await enveloped.execute({ schema: enveloped.schema, document, contextValue, variableValues: params.variables, operationName: params.operationName });
      if (!isObject(r) || Symbol.asyncIterator in r) return null;
      result = r as ExecutionResult;
    } catch {
      return null;
    }
    if (!result.errors?.length && !result.extensions) {
      return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(result) };
    }
    // With errors: Yoga's own serializer and status (masking already ran in execute).
    const response = processRegularResult(result, yoga.fetchAPI, 'application/json');
    const headers: Record<string, string> = {};
    response.headers.forEach((v, k) => { headers[k] = v; });
    const text = await response.text();
    // Answered here (nothing above may hand it over now): its unexpected errors, masked by now, are
    // logged with the request.
    reportUnexpected(result, rec, 'graphql');
    return { status: response.status, headers, body: text };
  };

  const counts = { fast: 0, handedOver: 0 };
  return {
    counts,
    async handle(req, res, rec) {
      if (!fastPathCandidate(req)) return void (yoga as any)(req, res, { rec });
      let body: Buffer;
      try { body = await readBody(req); } catch {
        res.destroy(); // the client went away before its body was complete: nobody to answer
        return;
      }
      const own: RequestRecord | undefined = rec && { ...rec };
      // A throw anywhere in the attempt (graphql-armor's limits throw from validate) is Yoga's to answer.
      const answer = await attempt(req, res, body, own).catch(() => null);
      if (!answer) {
        counts.handedOver++;
        return viaYoga(req, res, body, rec).catch((e) => { logUnexpected(e, 'http', rec); res.destroy(); });
      }
      counts.fast++;
      if (rec && own) Object.assign(rec, own);
      if (res.destroyed || res.writableEnded) return;
      res.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) }).end(answer.body);
    },
  };
}
