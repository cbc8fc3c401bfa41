import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino, type DestinationStream, type LevelWithSilent, type Logger } from 'pino';

export type { Logger };

/**
 * JSON-line logs (pino). One line per HTTP request and per WebSocket operation (`server/app.ts`),
 * background work of the instance (sweeps, retention, relistens, the sequencer), unexpected errors
 * with their stack (never in a response). The logger is made once where the process starts (`gateway
 * serve`: cli/main.ts) and handed down: `buildApp({ logger })` gives it to the Gateway, which gives it
 * to its services; without one an app logs nothing (library use, the tests).
 * Secrets never reach a line: bearer tokens, connection params and headers are not logged at all, and
 * `redactSecrets` is a second fence, applied to every line's object and to child loggers' bindings.
 */
export function createLogger(level: LevelWithSilent = 'info', destination?: DestinationStream): Logger {
  const logger = pino(
    {
      level,
      base: { service: 'agent-history-gateway', pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }), log: redactSecrets, bindings: redactSecrets },
    },
    destination,
  );
  // pino applies the bindings formatter to the root's bindings only: a child's (and its children's,
  // which inherit this) go through the fence here.
  const { child } = Object.getPrototypeOf(logger) as { child: (this: Logger, bindings: object, options?: object) => Logger };
  Object.defineProperty(logger, 'child', {
    value(this: Logger, bindings: object, options?: object) { return child.call(this, redactSecrets(bindings), options); },
    writable: true, configurable: true,
  });
  return logger;
}

/** The keys whose values never reach a line, at the top of a line's object or one level down. */
const SECRET_KEYS = ['authorization', 'token', 'secret', 'connectionParams'] as const;
const SECRET = new Set<string>(SECRET_KEYS);
export const REDACTED = '[redacted]';

/**
 * `o` with the value of every key named in SECRET_KEYS replaced by REDACTED, at its top level and
 * one level down (what pino's `redact` paths `token` and `*.token` cover), as a copy; `o` itself when
 * nothing is to be replaced (a request line: a dozen set lookups, no copy). The caller's objects are
 * never changed. An Error one level down stays an Error (same prototype, own properties copied), so
 * pino's error serializer still gives its type, message and stack.
 *
 * This replaces pino's `redact` option with wildcard paths, which calls its redactor on every value of
 * every line and cost about 6 µs per request line, half of the line.
 */
export function redactSecrets<T extends object>(o: T): T {
  const src = o as Record<string, unknown>;
  let out: Record<string, unknown> | null = null;
  for (const k in src) {
    if (!Object.prototype.hasOwnProperty.call(src, k)) continue;
    const v = src[k];
    if (v === undefined) continue;
    if (SECRET.has(k)) {
      (out ??= { ...src })[k] = REDACTED;
    } else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const r = redactedChild(v);
      if (r !== v) (out ??= { ...src })[k] = r;
    }
  }
  return (out ?? o) as T;
}

function redactedChild(v: object): object {
  let hit = false;
  for (const s of SECRET_KEYS) if (s in v && (v as Record<string, unknown>)[s] !== undefined) { hit = true; break; }
  if (!hit) return v;
  let copy: Record<string, unknown>;
  if (v instanceof Error) {
    copy = Object.create(Object.getPrototypeOf(v));
    for (const name of Object.getOwnPropertyNames(v)) Object.defineProperty(copy, name, Object.getOwnPropertyDescriptor(v, name)!);
  } else {
    copy = { ...v };
  }
  for (const s of SECRET_KEYS) {
    if (s in v && (v as Record<string, unknown>)[s] !== undefined) Object.defineProperty(copy, s, { value: REDACTED, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** A logger that writes nothing: an app or instance given none. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/**
 * What one HTTP request or WebSocket operation carries while it runs: its log line and metrics.
 *
 * It travels explicitly, never in AsyncLocalStorage: on Node 20 a store in use installs promise hooks
 * that tax every promise of the process, whatever it serves (12–16% of the gateway's CPU per read in
 * bench/reads.ts, and the same share of a subscription's deliveries). An HTTP request's record is
 * kept by its Node request (`recordHttpRequest`), which Yoga puts in every GraphQL context of the
 * request (`req`, its server context); a WebSocket operation puts it in the context it builds (`rec`).
 * `recordOf(context)` finds either.
 */
export interface RequestRecord {
  requestID: string;
  start: number;
  operationName?: string | null;
  operationType?: string;
  role?: string;
  tokenID?: string;
  errors?: number;
  /** An unexpected (masked) error happened. */
  failed?: boolean;
}

/**
 * A request's record with every field present from the start: the operation's hooks fill it in, and
 * writes to fields it already has keep one object shape (adding them one by one reshaped it per request).
 */
export function newRequestRecord(requestID: string): RequestRecord {
  return { requestID, start: performance.now(), operationName: undefined, operationType: undefined, role: undefined, tokenID: undefined, errors: undefined, failed: undefined };
}

/** HTTP requests' records, by their Node request (Yoga's server context holds it as `req`). */
const httpRecords = new WeakMap<object, RequestRecord>();

/** Makes `rec` the record of every GraphQL context of this HTTP request (see recordOf). */
export function recordHttpRequest(req: object, rec: RequestRecord): void {
  httpRecords.set(req, rec);
}

/** The record of the request a GraphQL context (or Yoga server context) belongs to. */
export function recordOf(context: unknown): RequestRecord | undefined {
  const c = context as { rec?: RequestRecord; req?: object } | null | undefined;
  return c?.rec ?? (c?.req ? httpRecords.get(c.req) : undefined);
}

/**
 * Masked errors whose original was unexpected, with that original: the mask (which sees no request)
 * marks them, and whoever holds the result and its request logs them (`reportUnexpected`).
 */
const unexpected = new WeakMap<object, unknown>();
export function markUnexpected(masked: Error, original: unknown): void {
  unexpected.set(masked, original);
}

/** Logs each unexpected error of a result (marked by markUnexpected) once, tagged with its request. */
export function reportUnexpected(log: Logger, result: unknown, rec: RequestRecord | undefined, where: string): void {
  const errors = (result as { errors?: readonly unknown[] } | null | undefined)?.errors;
  if (!errors?.length) return;
  for (const e of errors) {
    if (e === null || typeof e !== 'object' || !unexpected.has(e)) continue;
    const original = unexpected.get(e);
    unexpected.delete(e); // a result seen twice (batched, or a handed-over request) logs once
    logUnexpected(log, original, where, rec);
  }
}

const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/** The request ID: the caller's `x-request-id` when it is a plausible one, else a new UUID; echoed back. */
export function requestIDFor(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('x-request-id', id);
  return id;
}

export function resultOf(rec: RequestRecord, status?: number): string {
  if (rec.failed) return 'error';
  if (status !== undefined && status >= 400) return status === 401 ? 'unauthenticated' : 'rejected';
  if (rec.errors) return 'errors';
  return 'ok';
}

/** Logs an unexpected error with its stack, tagged with the request it happened in. */
export function logUnexpected(log: Logger, err: unknown, where: string, rec?: RequestRecord): void {
  if (rec) rec.failed = true;
  log.error({ err, requestID: rec?.requestID, operationName: rec?.operationName ?? undefined, where }, 'unexpected error');
}
