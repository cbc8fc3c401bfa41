// The bridge's side of the gateway: GraphQL calls (with retries across gateway restarts) and
// graphql-ws subscriptions, with the two roles the bridge needs (host: lifecycle; plugin: sessions).
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

/** An error member of a result union (`{ _tag: "SessionSealedError", ... }`). */
export class GatewayError extends Error {
  constructor(readonly tag: string, readonly fields: Record<string, unknown>) {
    super(`${tag}: ${String(fields.message ?? '')}`);
  }
}

const ERR = `__typename ... on Error { message code }`;

/**
 * Failpoint of the crash tests (test/bridge-opencode-crash.test.ts): with BRIDGE_CRASH_AFTER=<mutation>
 * the process kills itself (SIGKILL: no cleanup, no state written) right after the gateway accepted
 * that mutation for the first time, before the bridge could record the answer. That is the window the
 * idempotency keys close. Unset in production; the variable has no other effect.
 */
const CRASH_AFTER = process.env.BRIDGE_CRASH_AFTER ?? null;
function crashPoint(field: string) {
  if (CRASH_AFTER !== null && field === CRASH_AFTER) process.kill(process.pid, 'SIGKILL');
}

export class Gateway {
  private ws: Client | null = null;
  stopped = false;
  constructor(readonly url: string, readonly hostToken: string, readonly pluginToken: string, private readonly log: (m: string) => void = () => {}) {}

  /** Runs one operation; retries while the gateway is unreachable or answers 5xx (it restarts). */
  async request(query: string, variables: Record<string, unknown>, role: 'host' | 'plugin' = 'host'): Promise<any> {
    for (let attempt = 0; ; attempt++) {
      let res: Response | null = null;
      try {
        res = await fetch(this.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${role === 'host' ? this.hostToken : this.pluginToken}` },
          body: JSON.stringify({ query, variables }),
          signal: AbortSignal.timeout(60_000),
        });
      } catch (e) {
        if (this.stopped) throw e;
      }
      if (res && res.status < 500) {
        const body: any = await res.json().catch(() => ({}));
        if (body.errors?.length) throw new Error(`gateway: ${body.errors.map((e: any) => e.message).join('; ')}`);
        return body.data;
      }
      if (this.stopped) throw new Error('bridge stopped');
      if (attempt % 10 === 0) this.log(`gateway unreachable (${res ? `HTTP ${res.status}` : 'no connection'}); retrying`);
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 2_000)));
    }
  }

  /** A mutation whose root field is a result union: the success member, or a thrown GatewayError. */
  async call(field: string, inputType: string, selection: string, input: Record<string, unknown>, role: 'host' | 'plugin' = 'host'): Promise<any> {
    const q = `mutation($input: ${inputType}!) { r: ${field}(input: $input) { ${ERR} ${selection} } }`;
    const data = await this.request(q, { input }, role);
    const v = data.r;
    if (v?.__typename?.endsWith('Error')) {
      const { __typename, ...rest } = v;
      throw new GatewayError(__typename, rest);
    }
    crashPoint(field);
    return v;
  }

  /**
   * A subscription that stays up: graphql-ws re-sends it after a dropped socket, and when the gateway
   * ends it (an error while its database is down, a completed stream) it is subscribed again, with
   * backoff, with the variables `variables()` gives at that moment (e.g. the latest stored cursor).
   * `variables()` answering null ends it for good (e.g. the session was removed).
   */
  subscribe(query: string, variables: Record<string, unknown> | (() => Record<string, unknown> | null), role: 'host' | 'plugin',
    next: (data: any) => void | Promise<void>): () => void {
    const vars = typeof variables === 'function' ? variables : () => variables;
    let chain = Promise.resolve();
    let disposed = false;
    let current: (() => void) | null = null;
    let timer: NodeJS.Timeout | null = null;
    let attempt = 0;
    const again = (why: string) => {
      if (disposed || this.stopped) return;
      if (attempt % 10 === 0) this.log(`subscription ended (${why}); subscribing again`);
      const wait = Math.min(200 * 2 ** Math.min(attempt++, 8), 30_000);
      timer = setTimeout(start, wait);
      timer.unref();
    };
    const start = () => {
      timer = null;
      const v = disposed || this.stopped ? null : vars();
      if (!v) return;
      current = this.client(role).subscribe({ query, variables: v }, {
        next: (r) => {
          attempt = 0;
          if (r.data) chain = chain.then(() => next(r.data)).catch((e) => this.log(`subscription handler: ${e?.message ?? e}`));
          else if (r.errors) this.log(`subscription error: ${JSON.stringify(r.errors)}`);
        },
        error: (e) => again(Array.isArray(e) ? e.map((x: any) => x?.message).join('; ') : String((e as any)?.message ?? (e as any)?.reason ?? e)),
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

  private clients = new Map<string, Client>();
  private client(role: 'host' | 'plugin'): Client {
    let c = this.clients.get(role);
    if (!c) {
      c = createClient({
        url: this.url.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${role === 'host' ? this.hostToken : this.pluginToken}` },
        retryAttempts: Infinity,
        shouldRetry: () => !this.stopped,
        retryWait: async (n) => new Promise((r) => setTimeout(r, Math.min(100 * 2 ** n, 2_000))),
        lazy: true,
      });
      this.clients.set(role, c);
    }
    return c;
  }

  async close() {
    this.stopped = true;
    for (const c of this.clients.values()) await c.dispose();
    this.clients.clear();
    void this.ws;
  }
}
