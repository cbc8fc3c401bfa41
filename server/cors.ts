import type { IncomingMessage } from 'node:http';
import type { CorsConfig } from './config.js';

const ALLOWED_HEADERS = ['authorization', 'content-type', 'accept', 'x-request-id', 'idempotency-key'];

/**
 * Yoga's `cors` option. By default no cross-origin access at all: no Access-Control-* header is sent, so a
 * browser page of another origin can neither read an answer nor pass a preflight. Origins listed in
 * `CORS_ORIGINS` get their own origin back (never a wildcard, never another's), without credentials:
 * the gateway authenticates by bearer token, never by cookie.
 */
export function corsFor(config: CorsConfig) {
  const allowed = new Set(config.origins);
  return (request: Request) => {
    const origin = request.headers.get('origin');
    if (!origin || !allowed.has(origin)) return false as const;
    return {
      origin: [origin],
      credentials: false,
      methods: ['GET', 'POST', 'OPTIONS'],
      allowedHeaders: ALLOWED_HEADERS,
      exposedHeaders: ['x-request-id', 'retry-after'],
      maxAge: 600,
    };
  };
}

/**
 * WebSocket upgrades are not covered by CORS (browsers send Origin but enforce nothing), so the same
 * rule is applied here: a browser page of an origin that is neither this gateway's own nor listed is
 * refused before graphql-ws sees it. Clients that send no Origin (Node, CLIs) are unaffected.
 */
export function upgradeOriginAllowed(req: IncomingMessage, config: CorsConfig): boolean {
  const origin = req.headers.origin;
  if (!origin) return true;
  if (config.origins.includes(origin)) return true;
  const host = req.headers.host;
  if (!host) return false;
  return origin === `http://${host}` || origin === `https://${host}`;
}
