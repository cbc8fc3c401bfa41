import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { createYoga, maskError as yogaMaskError, type Plugin } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import { GraphQLError, type DocumentNode, type ExecutionArgs } from 'graphql';
import type { Sql } from '../db/connection.js';
import type { Actor } from '../domain/access.js';
import type { Context } from '../resolvers/context.js';
import { schema } from '../schema/index.js';
import { REFUSAL_CLOSE_REASONS, REVOKED_CLOSE_REASON, refusalOf, refusalResponse, useRoles } from './access.js';
import { useInputValidation } from './input-validation.js';
import { DEFAULT_LIMITS, useLimits, useRequestBodyLimit, type Limits } from './limits.js';
import { Gateway, type GatewayConfig } from './gateway.js';
import { useSharedSubscriptionExecution } from '../subscriptions/shared.js';
import { TokenCache, type TokenCacheOptions } from './token-cache.js';
import { isReviewPath, serveReview } from './review.js';
import { loadEdgeConfig, type CapsConfig, type CorsConfig } from './config.js';
import { guardRequestHooks, isDatabaseUnavailable, maskDatabaseErrors, readiness } from './availability.js';
import { corsFor, upgradeOriginAllowed } from './cors.js';
import { ClientCaps } from './caps.js';
import { maskSubscriptionErrors, refuseUpgrade } from './ws-guards.js';
import { isGraphiQLAsset, serveGraphiQL, serveGraphiQLAsset, wantsGraphiQL } from './graphiql.js';
import { serveGraphQLWs } from '../subscriptions/delivery.js';
import { logUnexpected, markUnexpected, reportUnexpected, newRequestRecord, recordHttpRequest, requestIDFor, resultOf, silentLogger, type Logger, type RequestRecord } from './logging.js';
import { Metrics } from './metrics.js';
import { VERSION } from './version.js';
import { operationOf, useOperationRecord } from './operations.js';
import { inOrder } from './operation-checks.js';
import { useCompiledQueries } from '../resolvers/compiled.js';
import { OtelExport, type OtelExportConfig } from './otel-export.js';
import { DEFAULT_TRUSTED_DOCUMENTS, TrustedDocuments, useTrustedDocuments, type TrustedDocumentsConfig } from './trusted-documents.js';

export interface AppOptions {
  sql: Sql;
  port?: number;
  host?: string;
  limits?: Limits;
  gateway?: Partial<GatewayConfig>;
  /** The authenticated-token cache (server/token-cache.ts). */
  tokenCache?: TokenCacheOptions;
  /** Cross-origin access (server/cors.ts); default from the environment (CORS_ORIGINS): none. */
  cors?: CorsConfig;
  /** Per-client caps (server/caps.ts); default from the environment. */
  caps?: Partial<CapsConfig>;
  /** `/metrics` on the main port requires this bearer token (unset: not served there; see metricsPort). */
  metricsToken?: string;
  /** Serve `/metrics` (no token) on a port of its own, on the same host. */
  metricsPort?: number;
  /** Where the instance's log lines go (server/logging.ts createLogger); none: nowhere. */
  logger?: Logger;
  /** Trusted documents (server/trusted-documents.ts): the known documents, and whether to run only those. */
  trustedDocuments?: TrustedDocumentsConfig;
  /** The OpenTelemetry trace export (server/otel-export.ts); none: off. */
  otel?: OtelExportConfig | null;
}

export interface App {
  url: string;
  wsUrl: string;
  port: number;
  gateway: Gateway;
  metrics: Metrics;
  /** The port of the metrics listener (when metricsPort was given). */
  metricsUrl?: string;
  /** Authenticated bearer tokens of this instance (dropped on revocation, unused while the bus is unhealthy). */
  tokens: TokenCache;
  /** Per-client caps of this instance. */
  caps: ClientCaps;
  /** The WebSocket server of /graphql (graphql-ws); the benchmark traces its sockets. */
  wss: WebSocketServer;
  /** The OpenTelemetry trace export, when configured. */
  otel: OtelExport | null;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The host, port and database of the pool (for a log line: never the user or password). */
function databaseOf(sql: Sql): string {
  const o = sql.options as { host?: string[]; port?: number[]; database?: string };
  return `${(o.host ?? []).map((h, i) => `${h}:${o.port?.[i] ?? 5432}`).join(',')}/${o.database ?? ''}`;
}

function bearer(header: unknown): string | null {
  if (!header || typeof header !== 'string') return null;
  const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return m ? m[1] : null;
}

/**
 * One gateway instance: GraphQL over HTTP and WebSocket (graphql-ws) on the same /graphql path,
 * GraphiQL, /health and /ready. Auth, roles, limits and error masking run in the envelop pipeline,
 * which WebSocket operations go through too.
 */
export function buildApp(opts: AppOptions): App {
  const { sql } = opts;
  const log = opts.logger ?? silentLogger();
  /**
   * Yoga's log lines at `level` of pino: a function that writes them when the logger has that level on,
   * else one that does nothing. Decided once (the level is set when the logger is made): Yoga calls its
   * logger several times per request, and a check per call costs a few percent of a small request.
   */
  const yogaLines = (level: 'debug' | 'warn') => log.isLevelEnabled(level)
    ? (...args: unknown[]) => log[level]({ yoga: args.map(String) }, 'graphql-yoga')
    : () => {};
  const gateway = new Gateway(sql, { sweepIntervalMs: 1_000, ...opts.gateway }, log);
  const otel = opts.otel ? new OtelExport(sql, gateway.bus, log, opts.otel) : null;
  const tokens = new TokenCache(sql, gateway.bus, opts.tokenCache);
  const actors = new WeakMap<Request, Actor>();
  const edge = loadEdgeConfig();
  const cors = opts.cors ?? edge.cors;
  const caps = new ClientCaps({ ...edge.caps, ...opts.caps });
  const metrics = new Metrics(sql, gateway, { defaultMetrics: true });
  otel?.registerMetrics(metrics.registry);
  gateway.onSeal = (outcome, seconds) => metrics.seals.observe({ outcome }, seconds);

  // A request with a cached token is authenticated synchronously (no promise in Yoga's request hooks);
  // others wait for the token's row.
  const auth: Plugin = {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (url.pathname !== '/graphql') return;
      const wantsGraphiQL = request.method === 'GET' && (request.headers.get('accept') ?? '').includes('text/html');
      if (wantsGraphiQL) return;
      const admit = (actor: Actor | null) => {
        if (!actor) {
          // What was wrong (none, not a token, not accepted here) and how to make one; nothing more.
          const r = refusalResponse(refusalOf(request.headers.get('authorization')));
          endResponse(new fetchAPI.Response(r.body, { status: r.status, headers: r.headers }));
          return;
        }
        actors.set(request, actor);
      };
      const secret = bearer(request.headers.get('authorization'));
      const known = tokens.cached(secret);
      return known !== undefined ? admit(known) : tokens.authenticate(secret).then(admit);
    },
  };

  const limits = opts.limits ?? DEFAULT_LIMITS;
  const [armor, costLimit] = useLimits(limits);
  const trusted = new TrustedDocuments(opts.trustedDocuments ?? DEFAULT_TRUSTED_DOCUMENTS);
  const yoga = createYoga<{ actor?: Actor; request?: Request; rec?: RequestRecord; req?: IncomingMessage }, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // Unexpected errors are masked in the response and logged with their stack (and request ID); the
    // database's absence is DATABASE_UNAVAILABLE (503).
    maskedErrors: {
      maskError: maskDatabaseErrors((error, message, isDev) => {
        const masked = yogaMaskError(error, message, isDev);
        // Logged with its request where the result meets it (server/logging.ts reportUnexpected).
        if (masked !== error) markUnexpected(masked, (error as { originalError?: unknown }).originalError ?? error);
        return masked;
      }),
    },
    cors: corsFor(cors),
    // Yoga's own log lines go to pino; its info and error lines at debug, since maskError above logs each
    // unexpected error once, with its stack and request ID.
    logging: { debug: yogaLines('debug'), info: yogaLines('debug'), warn: yogaLines('warn'), error: yogaLines('debug') },
    // GraphiQL is served by server/graphiql.ts (offline, subscriptions authenticated).
    graphiql: false,
    // The operation checks (record, roles, input validation, cost: in this order) run as one hook
    // (server/operation-checks.ts), which then picks the compiled executor for a query.
    plugins: guardRequestHooks([auth, useTrustedDocuments(trusted, (request) => actors.get(request), limits.maxTokens), ...inOrder([useOperationRecord(log), useRoles(), useInputValidation(), costLimit, useCompiledQueries()]), armor, useSharedSubscriptionExecution(),
      useRequestBodyLimit()]),
    // The body limit is useRequestBodyLimit's (server/limits.ts): Yoga's answers, without a stream pipeline for every body.
    maxRequestBodySize: false,
    context: ({ request, actor }) => {
      const who = actor ?? (request ? actors.get(request) : undefined);
      if (!who) throw new GraphQLError('Not authenticated.', { extensions: { code: 'UNAUTHENTICATED' } });
      return { sql, actor: who, gateway, tokens };
    },
  });

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/graphql' || wantsGraphiQL(req)) return handle(req, res, path);
    // One log line and one metric per GraphQL request; the record goes along with it (server/logging.ts).
    const rec = newRequestRecord(requestIDFor(req, res));
    recordHttpRequest(req, rec);
    res.once('finish', () => {
      const seconds = (performance.now() - rec.start) / 1000;
      const result = resultOf(rec, res.statusCode);
      metrics.observe('http', rec.operationName, rec.operationType, result, seconds);
      log.info({
        requestID: rec.requestID, transport: 'http', method: req.method, status: res.statusCode,
        operationName: rec.operationName ?? null, operationType: rec.operationType, role: rec.role, tokenID: rec.tokenID,
        result, errors: rec.errors, durationMs: Math.round(seconds * 10_000) / 10,
      }, 'request');
    });
    void handle(req, res, path);
  });
  const handle = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (path === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', version: VERSION }));
      return;
    }
    if (caps.isRefused(req.socket)) { res.destroy(); return; }
    if (path === '/metrics' && req.method === 'GET') return metrics.serve(req, res, opts.metricsToken);
    if (path === '/ready') {
      // Ready: the database answers and the LISTEN connection is known to hear every notification.
      const r = await readiness(sql);
      if (r.status !== 200) log.warn({ status: r.status, database: databaseOf(sql), reason: r.reason }, 'ready: the database does not answer');
      if (r.status === 200 && !gateway.bus.healthy) {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"status":"not listening: notifications may be missed"}');
        return;
      }
      res.writeHead(r.status, { 'content-type': 'application/json' }).end(r.body);
      return;
    }
    if (isReviewPath(path)) return void serveReview(req, res);
    if (isGraphiQLAsset(path)) return serveGraphiQLAsset(req, res, path);
    if (path === '/') {
      res.writeHead(302, { location: '/graphql' }).end();
      return;
    }
    if (path === '/graphql' && wantsGraphiQL(req)) return serveGraphiQL(req, res);
    // Yoga's server context is { req, res }, where every GraphQL context of the request starts (and
    // where recordOf finds the request's record). No context object of our own: Yoga's adapter would
    // copy it into its own, property descriptor by descriptor, on every request.
    yoga(req, res);
  };
  const metricsServer: Server | null = opts.metricsPort === undefined ? null : createServer((req, res) => {
    if ((req.url ?? '/').split('?')[0] === '/metrics' && req.method === 'GET') void metrics.serve(req, res, null);
    else res.writeHead(404).end();
  });

  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    caps.admit(s);
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  // noServer: the HTTP server's own errors (a port in use) stay its own, not the WebSocket server's.
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if (caps.isRefused(socket as Socket)) return;
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/graphql') return refuseUpgrade(socket, 404, 'NOT_FOUND', 'No WebSocket endpoint here; use /graphql.');
    if (!upgradeOriginAllowed(req, cors)) return refuseUpgrade(socket, 403, 'FORBIDDEN', 'This origin may not open a WebSocket to the gateway (CORS_ORIGINS).');
    // The connection's request ID (the caller's x-request-id when plausible), returned in the 101 response.
    const given = req.headers['x-request-id'];
    if (typeof given !== 'string' || !/^[\w.:@/+=-]{1,100}$/.test(given)) req.headers['x-request-id'] = randomUUID();
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  wss.on('headers', (headers, req) => { headers.push(`x-request-id: ${req.headers['x-request-id']}`); });
  type WsOp = RequestRecord & { deliveries: number; subscription: boolean; delivered?: { n: number } };
  type WsExtra = { actor: Actor; unwatch?: () => void; connectionID: string; ops: Map<string, WsOp>; counted?: boolean };
  /** One log line and one metric per WebSocket operation, when it ends (complete, error or the socket closing). */
  const finishOp = (extra: Partial<WsExtra>, id: string, ending: 'complete' | 'error' | 'closed') => {
    const op = extra.ops?.get(id);
    if (!op) return;
    extra.ops!.delete(id);
    if (op.subscription) metrics.subscriptionsOpen.dec({ operation: metrics.operationLabel(op.operationName) });
    const seconds = (performance.now() - op.start) / 1000;
    const result = ending === 'error' && !op.failed ? 'errors' : resultOf(op);
    metrics.observe('ws', op.operationName, op.operationType, result, seconds);
    log.info({
      requestID: op.requestID, transport: 'ws', operationName: op.operationName ?? null, operationType: op.operationType,
      role: op.role, tokenID: op.tokenID, result, ending, errors: op.errors, deliveries: op.subscription ? op.deliveries : undefined,
      durationMs: Math.round(seconds * 10_000) / 10,
    }, 'operation');
  };
  // graphql-ws' protocol over the `ws` server; a connection's messages leave it batched per event-loop turn.
  const wsServer = serveGraphQLWs<Record<string, unknown>, WsExtra>(
    {
      onConnect: async (ctx) => {
        ctx.extra.connectionID = String(ctx.extra.request.headers['x-request-id']);
        ctx.extra.ops = new Map();
        const p = ctx.connectionParams ?? {};
        const raw = (p.authorization ?? p.Authorization ?? (p.token ? `Bearer ${p.token}` : null)) as string | null;
        const socket = (ctx.extra as any).socket as { close(code: number, reason: string): void };
        let actor: Actor | null;
        try {
          actor = await tokens.authenticate(bearer(raw));
        } catch (e) {
          // Not graphql-ws' 4500 with the error's text: 1013 (try again later) while the database is
          // away, which clients retry; anything else 1011, masked.
          if (isDatabaseUnavailable(e)) socket.close(1013, 'Database unavailable; try again shortly');
          else socket.close(1011, 'Unexpected error');
          return false;
        }
        if (!actor) {
          // 4403 (graphql-ws' Forbidden, which its clients do not retry), saying what was wrong.
          socket.close(4403, REFUSAL_CLOSE_REASONS[refusalOf(raw)]);
          return false;
        }
        ctx.extra.actor = actor;
        // Revoked while connected: close with 4401, which graphql-ws clients do not retry. checkNow closes
        // the window between authentication and registration (a revocation noticed in between).
        ctx.extra.unwatch = gateway.revocations.watch(actor.tokenID, () => socket.close(4401, REVOKED_CLOSE_REASON), { checkNow: true });
        ctx.extra.counted = true;
        metrics.wsConnections.inc();
        log.debug({ requestID: ctx.extra.connectionID, role: actor.role, tokenID: actor.tokenID }, 'ws connected');
        return true;
      },
      onClose: (ctx, code) => {
        ctx.extra.unwatch?.();
        for (const id of [...(ctx.extra.ops?.keys() ?? [])]) finishOp(ctx.extra, id, 'closed');
        if (ctx.extra.counted) metrics.wsConnections.dec();
        log.debug({ requestID: ctx.extra.connectionID, code }, 'ws closed');
      },
      execute: (args: any) => args.rootValue.execute(args),
      subscribe: (args: any) => args.rootValue.subscribe(args),
      onNext: (ctx, id, _payload, _args, result) => {
        const op = ctx.extra.ops?.get(id);
        reportUnexpected(log, result, op, 'graphql');
        if (op?.subscription) { op.deliveries++; (op.delivered ??= metrics.deliveryCount(op.operationName)).n++; }
        caps.closeIfSlow((ctx.extra as any).socket);
      },
      // A stream that fails (its replay read while the database is away) is not sent the error's own text.
      onError: (ctx, id, _payload, errors) => {
        const op = ctx.extra.ops?.get(id);
        if (op) op.errors = (op.errors ?? 0) + errors.length;
        reportUnexpected(log, { errors }, op, 'graphql');
        finishOp(ctx.extra, id, 'error');
        return maskSubscriptionErrors(errors);
      },
      onComplete: (ctx, id) => finishOp(ctx.extra, id, 'complete'),
      onSubscribe: async (ctx, id, payload) => {
        const refusal = caps.subscriptionRefusal(Object.keys(ctx.subscriptions).length);
        if (refusal) return [refusal];
        const extra = ctx.extra as WsExtra;
        const rec: WsOp = {
          requestID: `${ctx.extra.connectionID}/${id}`, start: performance.now(), deliveries: 0, subscription: false,
          operationName: payload.operationName ?? null, role: extra.actor.role, tokenID: extra.actor.tokenID,
        };
        extra.ops.set(id, rec);
        try {
          const { schema: s, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
            ...ctx,
            actor: ctx.extra.actor,
            params: payload,
            rec,
          } as any);
          // A document by hash, or its text when the caller may send one (the HTTP side's rules and errors).
          let query: string;
          try { query = trusted.documentFor(payload, extra.actor, limits.maxTokens); } catch (e) {
            if (e instanceof GraphQLError) return [withCode(e, 'BAD_REQUEST')]; // its code, without the HTTP status
            throw e;
          }
          let document: DocumentNode;
          try { document = parse(query); } catch (e) {
            if (!(e instanceof GraphQLError)) throw e;
            // Yoga caches this error object by document and gives it its code only on an HTTP request
            // (in place, in an after-parse hook that a cache hit skips): code it here the same way, so
            // the same document sent over HTTP later is not answered without one.
            (e.extensions as Record<string, unknown>).code ||= 'GRAPHQL_PARSE_FAILED';
            throw withCode(e, 'GRAPHQL_PARSE_FAILED');
          }
          const op = operationOf(document, payload.operationName);
          rec.operationName = op.name;
          rec.operationType = op.type;
          const args: ExecutionArgs = {
            schema: s,
            operationName: payload.operationName,
            document,
            variableValues: payload.variables,
            contextValue: await contextFactory(),
            rootValue: { execute, subscribe },
          };
          const errors = validate(args.schema, args.document);
          // The same codes as over HTTP (Yoga's): a client tells its own mistakes from the gateway's.
          if (errors.length) return errors.map((e: GraphQLError) => withCode(e, 'GRAPHQL_VALIDATION_FAILED'));
          if (op.type === 'subscription') {
            rec.subscription = true;
            metrics.subscriptionsOpen.inc({ operation: metrics.operationLabel(op.name) });
          }
          return args;
        } catch (e) {
          // Parse and limit errors are the client's; anything else is masked like over HTTP.
          if (e instanceof GraphQLError) return [e];
          logUnexpected(log, e, 'ws subscribe', rec);
          return maskSubscriptionErrors([e]);
        }
      },
    },
    wss,
    { onInternalError: (err, where) => log.error({ err, where }, 'graphql-ws: internal error') },
  );

  const app: App = {
    url: '',
    wsUrl: '',
    port: 0,
    gateway,
    metrics,
    tokens,
    caps,
    wss,
    otel,
    async start() {
      await gateway.start();
      otel?.start();
      const listen = (srv: Server, port: number) => new Promise<void>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(port, opts.host ?? '127.0.0.1', () => { srv.off('error', reject); resolve(); });
      });
      try {
        await listen(server, opts.port ?? 0);
        if (metricsServer) {
          await listen(metricsServer, opts.metricsPort!);
          app.metricsUrl = `http://127.0.0.1:${(metricsServer.address() as { port: number }).port}/metrics`;
        }
      } catch (e) {
        server.close();
        await gateway.stop();
        throw e;
      }
      const addr = server.address() as { port: number };
      app.port = addr.port;
      app.url = `http://127.0.0.1:${addr.port}/graphql`;
      app.wsUrl = `ws://127.0.0.1:${addr.port}/graphql`;
    },
    /** Graceful: WebSocket clients get a 1001 close (they reconnect elsewhere), HTTP finishes in-flight requests. */
    async stop() {
      for (const c of wss.clients) c.close(1001, 'Going away');
      await wsServer.dispose();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections?.();
        setTimeout(() => { for (const s of sockets) s.destroy(); }, 2_000).unref();
      });
      if (metricsServer?.listening) await new Promise<void>((r) => metricsServer.close(() => r()));
      await otel?.stop();
      await gateway.stop();
    },
  };
  return app;
}

/**
 * A copy of the error for a WebSocket client: `extensions.code` set when it has none, without the
 * `http` extension Yoga adds in place to the (cached, shared) error objects of HTTP requests.
 */
function withCode(e: GraphQLError, code: string): GraphQLError {
  const { http: _http, ...extensions } = e.extensions as Record<string, unknown>;
  return new GraphQLError(e.message, {
    nodes: e.nodes, source: e.source, positions: e.positions, path: e.path, originalError: e.originalError,
    extensions: { ...extensions, code: extensions.code ?? code },
  });
}
