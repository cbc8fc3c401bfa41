import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import type { GatewayErrorName } from './generated.js';

export * from './generated.js';

/**
 * An error member as OpenCode plugins compare it: `{ _tag: "SessionBusyError", sessionID, ... }`.
 * Every member of a result union whose type implements `Error` is turned into one of these.
 */
export type Tagged<T> = T extends { __typename: infer N } ? { _tag: N } & Omit<T, '__typename'> : never;

/** A result union's error members: the schema names exactly its error types `…Error` (codegen.ts checks it). */
type ErrorMember<T> = Extract<T, { __typename: `${string}Error` }>;
/** The value of an operation's (single) root field. */
type RootValue<TData> = NonNullable<TData[keyof TData]>;

/** The errors an operation's result union can answer, tagged: what `GatewayCallError.error` is for that call. */
export type CallErrorOf<TData> = Tagged<ErrorMember<RootValue<TData>>>;
/** What `call` answers for an operation: its result union without the error members. */
export type CallResultOf<TData> = Exclude<RootValue<TData>, { __typename: `${string}Error` }>;
/** The tagged error union of a document: `CallError<typeof SealSessionDocument>`. */
export type CallError<TDoc> = TDoc extends TypedDocumentNode<infer TData, any> ? CallErrorOf<TData> : never;
/** The success member(s) of a document's result union: `CallResult<typeof SealSessionDocument>`. */
export type CallResult<TDoc> = TDoc extends TypedDocumentNode<infer TData, any> ? CallResultOf<TData> : never;

/**
 * An error member of some operation, when which one is not known (a plain `instanceof GatewayCallError`):
 * its `_tag` is one of the schema's error types, its other fields unknown until narrowed by
 * `GatewayCallError.is(e, document)`.
 */
export interface AnyCallError {
  readonly _tag: GatewayErrorName;
  readonly message: string;
  readonly code: number;
  readonly [field: string]: unknown;
}

/** Splits a result-union value into success or a tagged error (keyed on __typename ending in "Error"). */
export function tagged<T extends { __typename?: string }>(value: T): Tagged<T> {
  const { __typename, ...rest } = value as any;
  return { _tag: __typename, ...rest } as Tagged<T>;
}

export function isError(value: { __typename?: string } | null | undefined): boolean {
  return !!value?.__typename && /Error$/.test(value.__typename);
}

/**
 * The end of an exhaustive `switch` on `_tag`: it compiles only when every member was handled, so an
 * error type added to the operation's union breaks the build where it is not handled. At run time (a
 * newer gateway answering a member this build does not know) it throws, naming the member.
 */
export function unhandled(value: never): never {
  const tag = (value as { _tag?: unknown; __typename?: unknown } | null)?._tag ?? (value as { __typename?: unknown } | null)?.__typename;
  throw new Error(`unhandled result member: ${String(tag ?? JSON.stringify(value))}`);
}

export class GraphQLRequestError extends Error {
  constructor(readonly status: number, readonly errors: { message: string; extensions?: Record<string, unknown> }[]) {
    super(errors.map((e) => e.message).join('; ') || `HTTP ${status}`);
    this.name = 'GraphQLRequestError';
  }
}

/**
 * Thrown by `call` when the result is an error member: the tagged error itself, plus a message. `error` is
 * the union of exactly the operation's error members once narrowed by `GatewayCallError.is(e, document)`;
 * with a plain `instanceof` it is `AnyCallError`.
 */
export class GatewayCallError<E extends { readonly _tag: string } = AnyCallError> extends Error {
  constructor(readonly error: E, readonly document?: DocumentNode) {
    super(`${error._tag}: ${(error as { message?: unknown }).message ?? ''}`);
    this.name = 'GatewayCallError';
  }

  /**
   * `e instanceof GatewayCallError` as usual; declared so that TypeScript narrows `e` to
   * `GatewayCallError<AnyCallError>` (its own rule for a generic class would make `error` `any`).
   */
  static [Symbol.hasInstance](value: unknown): value is GatewayCallError {
    return Function.prototype[Symbol.hasInstance].call(this, value);
  }

  /**
   * Whether `e` is the error of a call of `document`; if so its `error` is typed as that operation's
   * error union, so a `switch` on `error._tag` knows every member and each member's fields.
   */
  static is<TData, TVars>(e: unknown, document: TypedDocumentNode<TData, TVars>): e is GatewayCallError<CallErrorOf<TData>> {
    return e instanceof GatewayCallError && e.document === document;
  }
}

/**
 * The gateway could not be reached: over HTTP (`request`, `call`: the fetch failed), or over WebSocket
 * (a subscription's `error`, once the client gave up reconnecting, or at once for a refused or revoked
 * token). `url` is the address tried; `cause` what failed (the network error, or the WebSocket's close
 * event with `code`).
 */
export class GatewayConnectionError extends Error {
  /** The WebSocket close code, when the connection was closed rather than failed (4403: token refused, 4401: revoked). */
  readonly code: number | undefined;
  /** What failed, in words (e.g. `fetch failed (connect ECONNREFUSED 127.0.0.1:4000)`). */
  readonly reason: string;
  constructor(readonly url: string, readonly cause: unknown, retriedForMs?: number) {
    const reason = describeCause(cause);
    super(`cannot connect to ${url}: ${reason}${retriedForMs ? ` (retried for ${Math.round(retriedForMs / 100) / 10} s)` : ''}`);
    this.name = 'GatewayConnectionError';
    this.code = closeCode(cause);
    this.reason = reason;
  }
}

function closeCode(cause: unknown): number | undefined {
  const code = (cause as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** What failed, in words: a Node network error (`ECONNREFUSED`, …), a close event (code, reason), a browser's bare error event. */
function describeCause(cause: unknown): string {
  const c = cause as { error?: unknown; message?: unknown; code?: unknown; reason?: unknown; cause?: unknown } | null;
  if (c?.error instanceof Error) return describeCause(c.error);
  if (c instanceof Error) {
    const inner = c.cause as { code?: unknown; message?: unknown } | undefined;
    // fetch's "fetch failed" hides the reason in `cause` (connect ECONNREFUSED …, getaddrinfo ENOTFOUND …).
    const code = typeof inner?.code === 'string' ? inner.code : '';
    const text = typeof inner?.message === 'string' ? inner.message : '';
    const detail = text.includes(code) ? text : [code, text].filter(Boolean).join(': ');
    return detail && !c.message.includes(detail) ? `${c.message} (${detail})` : c.message;
  }
  if (typeof c?.code === 'number') {
    // The gateway's reason says what was wrong with a refused or revoked token (and the command that makes one).
    const why = /token/.test(String(c.reason ?? '')) ? '' : c.code === 4403 ? 'the token was refused' : c.code === 4401 ? 'the token was revoked' : c.code === 1006 ? 'the connection failed' : '';
    return `closed with ${c.code}${c.reason ? ` ${String(c.reason)}` : ''}${why ? ` (${why})` : ''}`;
  }
  if (typeof c?.message === 'string' && c.message) return c.message;
  return 'the WebSocket failed (no detail given)';
}

export interface GatewayClientOptions {
  url: string;
  token: string;
  wsUrl?: string;
  /**
   * The WebSocket class for subscriptions. Default: the platform's `WebSocket` (browsers, Bun, Deno,
   * Node 22+), else the `ws` package, loaded only when a subscription starts (Node 20).
   */
  webSocketImpl?: unknown;
  /** `fetch` for requests. Default: the platform's. */
  fetch?: typeof fetch;
  /**
   * How long (ms) the WebSocket is retried, without a connection, before each subscription's `error` gets
   * a `GatewayConnectionError`: for a first connection that cannot be made and for one that was lost
   * alike. Retries back off from 100 ms to 2 s. Default 30,000; `Infinity` retries for good.
   */
  retryForMs?: number;
  /**
   * Send the client's own documents by hash (their `__meta__.hash`, from codegen) instead of their text, as a
   * gateway with TRUSTED_DOCUMENTS_ONLY=1 requires. Default true; a document without a hash, and one the
   * gateway does not know while it runs any document, go as text.
   */
  persistedDocuments?: boolean;
}

/** Default of `retryForMs`. */
export const DEFAULT_RETRY_FOR_MS = 30_000;

async function defaultWebSocket(): Promise<unknown> {
  if (typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'function') return (globalThis as { WebSocket: unknown }).WebSocket;
  const spec = 'ws'; // not a static import: browsers and bundlers never load it
  const mod: any = await import(/* @vite-ignore */ spec);
  return mod.WebSocket ?? mod.default;
}

/** The hash codegen gave one of the client's documents (client/persisted-documents.json), if any. */
function persistedHash(doc: DocumentNode): string | undefined {
  const hash = (doc as { __meta__?: { hash?: unknown } }).__meta__?.hash;
  return typeof hash === 'string' ? hash : undefined;
}

/** `extensions` naming a persisted document (Apollo's form, which Yoga's persisted-operations plugin reads). */
function byHash(hash: string) {
  return { persistedQuery: { version: 1, sha256Hash: hash } };
}

/** The printed text of each document, printed once. */
const printed = new WeakMap<DocumentNode, string>();
function textOf(doc: DocumentNode): string {
  let text = printed.get(doc);
  if (text === undefined) printed.set(doc, (text = print(doc)));
  return text;
}

function operationName(doc: DocumentNode): string | undefined {
  return doc.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition')?.name?.value;
}

/** The typed client shipped with the project: requests over HTTP, subscriptions over graphql-ws. */
export class GatewayClient {
  private ws: Promise<Client> | null = null;
  constructor(readonly opts: GatewayClientOptions) {}

  /** The WebSocket address subscriptions use. */
  get wsUrl(): string {
    return this.opts.wsUrl ?? this.opts.url.replace(/^http/, 'ws');
  }

  async request<TData, TVars extends Record<string, unknown>>(doc: TypedDocumentNode<TData, TVars>, variables?: TVars): Promise<TData> {
    const hash = this.opts.persistedDocuments === false ? undefined : persistedHash(doc);
    if (hash) {
      const r = await this.post({ operationName: operationName(doc), variables, extensions: byHash(hash) });
      // A gateway that does not know this document (another version's) but runs any: sent as text.
      if (!r.errors?.some((e) => e.extensions?.code === 'PERSISTED_QUERY_NOT_IN_LIST')) return this.answer<TData>(r);
    }
    return this.answer<TData>(await this.post({ query: textOf(doc), operationName: operationName(doc), variables }));
  }

  private async post(body: Record<string, unknown>): Promise<{ status: number; ok: boolean; data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] }> {
    let res: Response;
    try {
      res = await (this.opts.fetch ?? fetch)(this.opts.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.opts.token}` },
        body: JSON.stringify(body),
      });
    } catch (e) {
      throw new GatewayConnectionError(this.opts.url, e);
    }
    const parsed: any = await res.json().catch(() => ({}));
    return { status: res.status, ok: res.ok, data: parsed.data, errors: Array.isArray(parsed.errors) ? parsed.errors : undefined };
  }

  private answer<TData>(r: { status: number; ok: boolean; data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] }): TData {
    if (!r.ok || r.errors?.length) throw new GraphQLRequestError(r.status, r.errors ?? []);
    return r.data as TData;
  }

  /**
   * Runs a mutation whose single root field is a result union and returns the success member, or
   * the tagged error member (`{ _tag, ... }`) as a rejected `GatewayCallError`, the way plugins expect.
   * `GatewayCallError.is(e, doc)` narrows a caught error to this operation's error union.
   */
  async call<TData, TVars extends Record<string, unknown>>(doc: TypedDocumentNode<TData, TVars>, variables?: TVars): Promise<CallResultOf<TData>> {
    const data = await this.request(doc, variables);
    const value = Object.values(data as object)[0] as { __typename?: string };
    if (isError(value)) throw new GatewayCallError(tagged(value) as unknown as CallErrorOf<TData>, doc);
    return value as CallResultOf<TData>;
  }

  /**
   * Starts a subscription over graphql-ws; answers the function that stops it. `sink.error` gets the
   * GraphQL errors the gateway ended it with (an array), or a `GatewayConnectionError` (the connection
   * could not be made within `retryForMs`, or the token was refused or revoked); either ends it.
   */
  subscribe<TData, TVars extends Record<string, unknown>>(
    doc: TypedDocumentNode<TData, TVars>,
    variables: TVars,
    sink: { next(v: TData): void; error?(e: unknown): void; complete?(): void },
  ): () => void {
    this.ws ??= this.connect();
    // graphql-ws re-sends this same payload after a reconnect. For cursor streams (executionSettled,
    // sessionEvents: an `after` variable and a `cursor` on each event) it is kept at the last event
    // received, so a resumed stream continues after it: no gap, no duplicate.
    let hash = this.opts.persistedDocuments === false ? undefined : persistedHash(doc);
    const payload: { query: string; operationName?: string; variables: Record<string, unknown>; extensions?: Record<string, unknown> } = {
      query: '', operationName: operationName(doc), variables: { ...variables } as Record<string, unknown>,
    };
    const sendAs = () => {
      // graphql-ws requires a query string: empty when the document goes by hash.
      payload.query = hash ? '' : textOf(doc);
      if (hash) payload.extensions = byHash(hash);
      else delete payload.extensions;
    };
    sendAs();
    const resumes = doc.definitions.some((d) => d.kind === 'OperationDefinition' && d.variableDefinitions?.some((v) => v.variable.name.value === 'after'));
    let stop: (() => void) | null = null;
    let stopped = false;
    let ended = false;
    const end = (f: () => void) => { if (!ended) { ended = true; f(); } };
    const start = (ws: Client) => {
      if (stopped) return;
      stop = ws.subscribe(payload, {
        next: (v: { data?: unknown; errors?: unknown }) => {
          if (v.data) {
            const event = Object.values(v.data as object)[0] as { cursor?: unknown } | null;
            if (resumes && event && typeof event.cursor === 'string') payload.variables.after = event.cursor;
            sink.next(v.data as TData);
          } else if (v.errors) sink.error?.(v.errors);
        },
        error: (e: unknown) => {
          // A gateway that does not know this document (another version's) but runs any: sent again as text.
          if (hash && Array.isArray(e) && e.some((x) => x?.extensions?.code === 'PERSISTED_QUERY_NOT_IN_LIST')) {
            hash = undefined;
            sendAs();
            return start(ws);
          }
          end(() => sink.error?.(Array.isArray(e) ? e : new GatewayConnectionError(this.wsUrl, e, this.givenUpAfter)));
        },
        complete: () => end(() => sink.complete?.()),
      });
    };
    this.ws.then(start, (e) => end(() => sink.error?.(new GatewayConnectionError(this.wsUrl, e))));
    return () => { stopped = true; stop?.(); };
  }

  /** How long the client had retried when it gave up (for the error's message); 0 for a final refusal. */
  private givenUpAfter = 0;

  private async connect(): Promise<Client> {
    const retryForMs = this.opts.retryForMs ?? DEFAULT_RETRY_FOR_MS;
    /** When the connection was last known good (connected), or first failed after that. */
    let failingSince: number | null = null;
    const client = createClient({
      url: this.wsUrl,
      webSocketImpl: this.opts.webSocketImpl ?? await defaultWebSocket(),
      connectionParams: { authorization: `Bearer ${this.opts.token}` },
      lazy: true,
      retryAttempts: Infinity,
      // Retry lost connections, graceful restarts (1001) and connections that cannot be made, for
      // retryForMs in a row; never an auth refusal (4401 revoked, 4403 bad token).
      shouldRetry: (e: unknown) => {
        const code = closeCode(e);
        if (code === 4401 || code === 4403) { this.givenUpAfter = 0; return false; }
        const now = Date.now();
        failingSince ??= now;
        if (now - failingSince < retryForMs) return true;
        this.givenUpAfter = now - failingSince;
        failingSince = null;
        return false;
      },
      retryWait: async (n) => new Promise((r) => setTimeout(r, Math.min(100 * 2 ** n, 2_000))),
      on: { connected: () => { failingSince = null; } },
    });
    return client;
  }

  /**
   * Closes the WebSocket (its subscriptions end). Never throws: a connection that was never made, or is
   * being retried, has nothing to close.
   */
  async close(): Promise<void> {
    const ws = this.ws;
    this.ws = null;
    const client = await ws?.catch(() => null);
    // graphql-ws' dispose awaits a connection attempt in flight, and rejects with its failure (the
    // close event, or `All Subscriptions Gone` when none was left to retry for): nothing to close then.
    if (client) await Promise.resolve().then(() => client.dispose()).catch(() => {});
  }
}
