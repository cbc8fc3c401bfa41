import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { createYoga, type Plugin } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import { GraphQLError, type ExecutionArgs } from 'graphql';
import type { Sql } from '../db/connection.js';
import type { Actor } from '../domain/access.js';
import { lazyLoaders, type Context } from '../resolvers/context.js';
import { schema } from '../schema/index.js';
import { useRoles } from './access.js';
import { useInputValidation } from './input-validation.js';
import { DEFAULT_LIMITS, useLimits, type Limits } from './limits.js';
import { Gateway, type GatewayConfig } from './gateway.js';
import { useSharedSubscriptionExecution } from '../subscriptions/shared.js';
import { TokenCache, type TokenCacheOptions } from './token-cache.js';
import { isReviewPath, serveReview } from './review.js';
import { useCompiledQueries } from '../resolvers/compiled.js';

export interface AppOptions {
  sql: Sql;
  port?: number;
  host?: string;
  limits?: Limits;
  gateway?: Partial<GatewayConfig>;
  /** The authenticated-token cache (server/token-cache.ts). */
  tokenCache?: TokenCacheOptions;
}

export interface App {
  url: string;
  wsUrl: string;
  port: number;
  gateway: Gateway;
  /** Authenticated bearer tokens of this instance (dropped on revocation, unused while the bus is unhealthy). */
  tokens: TokenCache;
  start(): Promise<void>;
  stop(): Promise<void>;
}

function bearer(header: string | null | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return m ? m[1] : null;
}

const UNAUTHENTICATED = JSON.stringify({
  errors: [{ message: 'A valid bearer token is required (Authorization: Bearer <token>).', extensions: { code: 'UNAUTHENTICATED' } }],
});

/**
 * One gateway instance: GraphQL over HTTP and WebSocket (graphql-ws) on the same /graphql path,
 * GraphiQL, /health and /ready. Auth, roles, limits and error masking run in the envelop pipeline,
 * which WebSocket operations go through too.
 */
export function buildApp(opts: AppOptions): App {
  const { sql } = opts;
  const gateway = new Gateway(sql, { sweepIntervalMs: 1_000, ...opts.gateway });
  const tokens = new TokenCache(sql, gateway.bus, opts.tokenCache);
  const actors = new WeakMap<Request, Actor>();

  const auth: Plugin = {
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (url.pathname !== '/graphql') return;
      const wantsGraphiQL = request.method === 'GET' && (request.headers.get('accept') ?? '').includes('text/html');
      if (wantsGraphiQL) return;
      const actor = await tokens.authenticate(bearer(request.headers.get('authorization')));
      if (!actor) {
        endResponse(new fetchAPI.Response(UNAUTHENTICATED, {
          status: 401,
          headers: { 'content-type': 'application/json', 'www-authenticate': 'Bearer' },
        }));
        return;
      }
      actors.set(request, actor);
    },
  };

  const yoga = createYoga<{ actor?: Actor; request?: Request }, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    maskedErrors: true,
    graphiql: {
      title: 'Agent history gateway',
      subscriptionsProtocol: 'WS',
      headers: JSON.stringify({ Authorization: 'Bearer <paste the admin token printed at first start>' }),
    },
    plugins: [auth, useRoles(), useInputValidation(), ...useLimits(opts.limits ?? DEFAULT_LIMITS), useSharedSubscriptionExecution(), useCompiledQueries()],
    context: ({ request, actor }) => {
      const who = actor ?? (request ? actors.get(request) : undefined);
      if (!who) throw new GraphQLError('Not authenticated.', { extensions: { code: 'UNAUTHENTICATED' } });
      return { sql, actor: who, loaders: lazyLoaders(sql, who), gateway, tokens };
    },
  });

  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    if (path === '/ready') {
      try {
        await sql`SELECT 1 FROM schema_migrations LIMIT 1`;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ready"}');
      } catch {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"status":"database unavailable"}');
      }
      return;
    }
    if (isReviewPath(path)) return void serveReview(req, res);
    if (path === '/') {
      res.writeHead(302, { location: '/graphql' }).end();
      return;
    }
    yoga(req, res);
  });

  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  const wss = new WebSocketServer({ server, path: '/graphql' });
  const wsServer = useServer<Record<string, unknown>, { actor: Actor; unwatch?: () => void }>(
    {
      onConnect: async (ctx) => {
        const p = ctx.connectionParams ?? {};
        const raw = (p.authorization ?? p.Authorization ?? (p.token ? `Bearer ${p.token}` : null)) as string | null;
        const actor = await tokens.authenticate(bearer(raw));
        if (!actor) return false; // closes with 4403 Forbidden
        ctx.extra.actor = actor;
        // Revoked while connected: close with 4401, which graphql-ws clients do not retry. checkNow closes
        // the window between authentication and registration (a revocation noticed in between).
        const socket = (ctx.extra as any).socket as { close(code: number, reason: string): void };
        ctx.extra.unwatch = gateway.revocations.watch(actor.tokenID, () => socket.close(4401, 'Unauthorized: token revoked'), { checkNow: true });
        return true;
      },
      onClose: (ctx) => { ctx.extra.unwatch?.(); },
      execute: (args: any) => args.rootValue.execute(args),
      subscribe: (args: any) => args.rootValue.subscribe(args),
      onSubscribe: async (ctx, _id, payload) => {
        try {
          const { schema: s, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
            ...ctx,
            actor: ctx.extra.actor,
            params: payload,
          } as any);
          const document = parse(payload.query);
          const args: ExecutionArgs = {
            schema: s,
            operationName: payload.operationName,
            document,
            variableValues: payload.variables,
            contextValue: await contextFactory(),
            rootValue: { execute, subscribe },
          };
          const errors = validate(args.schema, args.document);
          if (errors.length) return errors;
          return args;
        } catch (e) {
          // Parse and limit errors are the client's; anything else is masked like over HTTP.
          if (e instanceof GraphQLError) return [e];
          return [new GraphQLError('Unexpected error.', { extensions: { code: 'INTERNAL_SERVER_ERROR' } })];
        }
      },
    },
    wss,
  );

  const app: App = {
    url: '',
    wsUrl: '',
    port: 0,
    gateway,
    tokens,
    async start() {
      await gateway.start();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
      });
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
      await gateway.stop();
    },
  };
  return app;
}
