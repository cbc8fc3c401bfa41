import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { createClient, type Client } from 'graphql-ws';

export * from './generated.js';

/**
 * An error member as OpenCode plugins compare it: `{ _tag: "SessionBusyError", sessionID, ... }`.
 * Every member of a result union whose type implements `Error` is turned into one of these.
 */
export type Tagged<T> = T extends { __typename: infer N } ? Omit<T, '__typename'> & { _tag: N } : never;

/** Splits a result-union value into success or a tagged error (keyed on __typename ending in "Error"). */
export function tagged<T extends { __typename?: string }>(value: T): Tagged<T> {
  const { __typename, ...rest } = value as any;
  return { _tag: __typename, ...rest } as Tagged<T>;
}

export function isError(value: { __typename?: string } | null | undefined): boolean {
  return !!value?.__typename && /Error$/.test(value.__typename);
}

export class GraphQLRequestError extends Error {
  constructor(readonly status: number, readonly errors: { message: string; extensions?: Record<string, unknown> }[]) {
    super(errors.map((e) => e.message).join('; ') || `HTTP ${status}`);
  }
}

/** Thrown by `call` when the result is an error member: the tagged error itself, plus a message. */
export class GatewayCallError extends Error {
  constructor(readonly error: { _tag: string; message: string; code: number } & Record<string, unknown>) {
    super(`${error._tag}: ${error.message}`);
  }
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
}

async function defaultWebSocket(): Promise<unknown> {
  if (typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'function') return (globalThis as { WebSocket: unknown }).WebSocket;
  const spec = 'ws'; // not a static import: browsers and bundlers never load it
  const mod: any = await import(/* @vite-ignore */ spec);
  return mod.WebSocket ?? mod.default;
}

/** The typed client shipped with the project: requests over HTTP, subscriptions over graphql-ws. */
export class GatewayClient {
  private ws: Promise<Client> | null = null;
  constructor(readonly opts: GatewayClientOptions) {}

  async request<TData, TVars extends Record<string, unknown>>(doc: TypedDocumentNode<TData, TVars>, variables?: TVars): Promise<TData> {
    const res = await (this.opts.fetch ?? fetch)(this.opts.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.opts.token}` },
      body: JSON.stringify({ query: print(doc), variables }),
    });
    const body: any = await res.json().catch(() => ({}));
    if (!res.ok || body.errors?.length) throw new GraphQLRequestError(res.status, body.errors ?? []);
    return body.data as TData;
  }

  /**
   * Runs a mutation whose single root field is a result union and returns the success member, or
   * the tagged error member (`{ _tag, ... }`) as a rejected promise, the way plugins expect.
   */
  async call<TData, TVars extends Record<string, unknown>>(doc: TypedDocumentNode<TData, TVars>, variables?: TVars):
    Promise<Exclude<TData[keyof TData], { __typename: `${string}Error` }>> {
    const data = await this.request(doc, variables);
    const value = Object.values(data as any)[0] as any;
    if (isError(value)) throw new GatewayCallError(tagged(value) as any);
    return value;
  }

  subscribe<TData, TVars extends Record<string, unknown>>(
    doc: TypedDocumentNode<TData, TVars>,
    variables: TVars,
    sink: { next(v: TData): void; error?(e: unknown): void; complete?(): void },
  ): () => void {
    this.ws ??= (async () => createClient({
      url: this.opts.wsUrl ?? this.opts.url.replace(/^http/, 'ws'),
      webSocketImpl: this.opts.webSocketImpl ?? await defaultWebSocket(),
      connectionParams: { authorization: `Bearer ${this.opts.token}` },
      retryAttempts: Infinity,
      // Retry lost connections and graceful restarts (1001), never an auth refusal (4401 revoked, 4403 bad token).
      shouldRetry: (e: unknown) => !(e && typeof e === 'object' && 'code' in e && [4401, 4403].includes((e as { code: number }).code)),
      retryWait: async (n) => new Promise((r) => setTimeout(r, Math.min(100 * 2 ** n, 2_000))),
    }))();
    // graphql-ws re-sends this same payload after a reconnect. For cursor streams (executionSettled,
    // sessionEvents: an `after` variable and a `cursor` on each event) it is kept at the last event
    // received, so a resumed stream continues after it: no gap, no duplicate.
    const payload = { query: print(doc), variables: { ...variables } as Record<string, unknown> };
    const resumes = doc.definitions.some((d) => d.kind === 'OperationDefinition' && d.variableDefinitions?.some((v) => v.variable.name.value === 'after'));
    let stop: (() => void) | null = null;
    let stopped = false;
    this.ws.then((ws) => {
      if (stopped) return;
      stop = ws.subscribe<TData>(payload, sink2);
    }, (e) => sink.error?.(e));
    const sink2 = {
      next: (v: { data?: unknown; errors?: unknown }) => {
        if (v.data) {
          const event = Object.values(v.data as object)[0] as { cursor?: unknown } | null;
          if (resumes && event && typeof event.cursor === 'string') payload.variables.after = event.cursor;
          sink.next(v.data as TData);
        } else if (v.errors) sink.error?.(v.errors);
      },
      error: (e: unknown) => sink.error?.(e),
      complete: () => sink.complete?.(),
    };
    return () => { stopped = true; stop?.(); };
  }

  async close(): Promise<void> {
    const ws = this.ws;
    this.ws = null;
    await (await ws?.catch(() => null))?.dispose();
  }
}
