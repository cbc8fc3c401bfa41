// The bridges' side of the gateway (the OpenCode bridge, the hooks-driven hosts): the project's typed client (client/index.ts) with the generated
// documents of client/operations/*.graphql, so no document the bridge sends can be invalid at run time.
// Adds what a long-running host needs: retries across gateway restarts, the two roles (host: lifecycle;
// plugin: sessions, corrections, sessionEvents), and subscriptions that are subscribed again when the
// gateway ends them.
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { OperationDefinitionNode } from 'graphql';
import { GatewayCallError, GatewayClient, GraphQLRequestError } from '../../client/index.js';
import type { SnapshotTransport } from '../../host/snapshot-upload.js';

/** An error member of a result union (`{ _tag: "SessionSealedError", ... }`). */

/** How many masked internal errors (HTTP 500) one request retries before it throws (Gateway.request). */
const INTERNAL_ERROR_TRIES = 3;
export class GatewayError extends Error {
  constructor(readonly tag: string, readonly fields: Record<string, unknown>) {
    super(`${tag}: ${String(fields.message ?? '')}`);
  }
}

/**
 * Failpoint of the crash tests (test/bridge-opencode-crash.test.ts): with BRIDGE_CRASH_AFTER=<mutation>
 * the process kills itself (SIGKILL: no cleanup, no state written) right after the gateway accepted
 * that mutation for the first time, before the bridge could record the answer. That is the window the
 * idempotency keys close. `opencode:createSession`: right after OpenCode created a CREATE_SESSION child. Unset in production; the variable has no other effect.
 */
const CRASH_AFTER = process.env.BRIDGE_CRASH_AFTER ?? null;
export function crashPoint(field: string) {
  if (CRASH_AFTER !== null && field === CRASH_AFTER) process.kill(process.pid, 'SIGKILL');
}

type Role = 'host' | 'plugin';
/** The success member of a one-field mutation result (the union minus its error members). */
export type Success<TData> = Exclude<TData[keyof TData], { __typename: `${string}Error` } | null | undefined>;

function rootField(doc: TypedDocumentNode<any, any>): string {
  const op = doc.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
  const sel = op?.selectionSet.selections[0];
  return sel && sel.kind === 'Field' ? sel.name.value : '?';
}

/** A fetch with a bounded wait (a gateway that accepted the connection but never answers). */
const timedFetch: typeof fetch = (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(60_000) });

export class Gateway {
  stopped = false;
  private readonly clients: Record<Role, GatewayClient>;
  constructor(readonly url: string, hostToken: string, pluginToken: string, private readonly log: (m: string) => void = () => {}) {
    this.clients = {
      host: new GatewayClient({ url, token: hostToken, fetch: timedFetch }),
      plugin: new GatewayClient({ url, token: pluginToken, fetch: timedFetch }),
    };
  }

  /** Since when the last request found the gateway unreachable (no connection, 5xx); null once one got through. */
  unreachableSince: number | null = null;
  private readonly downWaiters = new Set<() => void>();

  /** Resolves when a request finds the gateway unreachable (at once if the last one did); `cancel` forgets it. */
  whenUnreachable(): { promise: Promise<void>; cancel: () => void } {
    let f!: () => void;
    const promise = new Promise<void>((r) => { f = r; });
    if (this.unreachableSince !== null) f();
    else this.downWaiters.add(f);
    return { promise, cancel: () => this.downWaiters.delete(f) };
  }

  /**
   * Runs one operation; retries while the gateway is unreachable or answers 502-504 (it restarts, its database is
   * away: 503 DATABASE_UNAVAILABLE). A masked 500 (INTERNAL_SERVER_ERROR) is retried a few times, since a failure
   * the gateway could not classify may still be transient, then thrown: a persistent one is a defect, and retrying
   * it for ever would hang the host with the gateway up.
   */
  async request<TData, TVars extends Record<string, unknown>>(doc: TypedDocumentNode<TData, TVars>, variables: TVars, role: Role = 'host'): Promise<TData> {
    for (let attempt = 0, internal = 0; ; attempt++) {
      let why: string;
      try {
        const r = await this.clients[role].request(doc, variables);
        this.unreachableSince = null;
        return r;
      } catch (e) {
        const answered = e instanceof GraphQLRequestError && (e.status < 500 || (e.status === 500 && ++internal > INTERNAL_ERROR_TRIES));
        if (answered) { this.unreachableSince = null; throw new Error(`gateway ${rootField(doc)}: ${e.message}`); }
        if (this.stopped) throw e;
        why = e instanceof GraphQLRequestError ? `HTTP ${e.status}` : 'no connection';
        this.unreachableSince ??= Date.now();
        for (const w of this.downWaiters) w();
        this.downWaiters.clear();
      }
      if (this.stopped) throw new Error('bridge stopped');
      if (attempt % 10 === 0) this.log(`gateway unreachable (${why}); retrying`);
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 2_000)));
    }
  }

  /** A mutation whose root field is a result union: the success member, or a thrown GatewayError. */
  async call<TData, TVars extends Record<string, unknown>>(doc: TypedDocumentNode<TData, TVars>, variables: TVars, role: Role = 'host'): Promise<Success<TData>> {
    const data = await this.request(doc, variables, role);
    const v = Object.values(data as object)[0] as any;
    if (v?.__typename?.endsWith('Error')) {
      const { __typename, ...rest } = v;
      throw new GatewayError(__typename, rest);
    }
    crashPoint(rootField(doc));
    return v;
  }

  /**
   * A subscription that stays up: graphql-ws re-sends it after a dropped socket, and when the gateway
   * ends it (an error while its database is down, a completed stream) it is subscribed again, with
   * backoff, with the variables `variables()` gives at that moment (e.g. the latest stored cursor).
   * `variables()` answering null ends it for good (e.g. the session was removed); so does an error with
   * `extensions.code` NOT_FOUND (the subscribed object is gone), after `onGone`.
   */
  subscribe<TData, TVars extends Record<string, unknown>>(doc: TypedDocumentNode<TData, TVars>, variables: () => TVars | null, role: Role,
    next: (data: TData) => void | Promise<void>, onGone?: () => void | Promise<void>): () => void {
    let chain = Promise.resolve();
    let disposed = false;
    let current: (() => void) | null = null;
    let timer: NodeJS.Timeout | null = null;
    let attempt = 0;
    const again = (why: string) => {
      if (disposed || this.stopped) return;
      if (attempt % 10 === 0) this.log(`subscription ${rootField(doc)} ended (${why}); subscribing again`);
      const wait = Math.min(200 * 2 ** Math.min(attempt++, 8), 30_000);
      timer = setTimeout(start, wait);
      timer.unref();
    };
    const start = () => {
      timer = null;
      const v = disposed || this.stopped ? null : variables();
      if (!v) return;
      current = this.clients[role].subscribe(doc, v, {
        next: (data) => {
          attempt = 0;
          chain = chain.then(() => next(data)).catch((e) => this.log(`subscription handler: ${e?.message ?? e}`));
        },
        error: (e) => {
          current?.();
          if (onGone && Array.isArray(e) && e.some((x: any) => x?.extensions?.code === 'NOT_FOUND')) {
            disposed = true;
            chain = chain.then(() => onGone()).catch((err) => this.log(`subscription handler: ${err?.message ?? err}`));
            return;
          }
          again(Array.isArray(e) ? e.map((x: any) => x?.message).join('; ') : String((e as any)?.message ?? (e as any)?.reason ?? e));
        },
        complete: () => again('completed by the gateway'),
      });
    };
    start();
    return () => {
      disposed = true;
      if (timer) clearTimeout(timer);
      current?.();
    };
  }

  async close() {
    this.stopped = true;
    // A socket that never connected (the gateway down) rejects its disposal with its close event: nothing to close.
    await Promise.all(Object.values(this.clients).map((c) => c.close().catch(() => {})));
  }
}

/**
 * The typed documents over the bridge's gateway connection (which retries across gateway restarts):
 * the success member of the result union, or a thrown GatewayCallError as `GatewayClient.call` does.
 */
export function bridgeTransport(gw: Pick<Gateway, 'call'>): SnapshotTransport {
  return {
    async call<TData, TVars extends Record<string, unknown>>(doc: TypedDocumentNode<TData, TVars>, variables?: TVars) {
      try {
        return await gw.call(doc, (variables ?? {}) as TVars);
      } catch (e) {
        if (e instanceof GatewayError) throw new GatewayCallError({ _tag: e.tag, message: String(e.fields.message ?? ''), code: Number(e.fields.code ?? 0), ...e.fields });
        throw e;
      }
    },
  };
}

export { GatewayCallError };
