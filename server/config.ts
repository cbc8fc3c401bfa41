/** A bad option: one line naming the variable, what it must be and what it was. */
export class ConfigError extends Error {}

/** Which browser origins may call the gateway (server/cors.ts). */
export interface CorsConfig {
  /** Exact origins (`scheme://host[:port]`) allowed cross-origin; empty: none (the default). */
  origins: string[];
}

/** Per-client caps (server/caps.ts). */
export interface CapsConfig {
  /** Open TCP connections (HTTP keep-alive and WebSocket alike) from one remote address. */
  connectionsPerClient: number;
  /** Operations running at once on one WebSocket connection (subscriptions, mostly). */
  subscriptionsPerConnection: number;
  /** Bytes a WebSocket may have queued unsent before the gateway closes it as a slow consumer. */
  maxBufferedBytes: number;
}

export const DEFAULT_CAPS: CapsConfig = {
  connectionsPerClient: 128,
  subscriptionsPerConnection: 100,
  maxBufferedBytes: 16 * 1024 * 1024,
};

export interface EdgeConfig {
  cors: CorsConfig;
  caps: CapsConfig;
}

type Env = Record<string, string | undefined>;

/**
 * CORS and caps, read from the environment (README, "Configuration"): `CORS_ORIGINS`,
 * `MAX_CONNECTIONS_PER_CLIENT`, `MAX_SUBSCRIPTIONS_PER_CONNECTION`, `MAX_WS_BUFFERED_BYTES`.
 * Unset or empty variables take their defaults; a bad value throws ConfigError.
 */
export function loadEdgeConfig(env: Env = process.env): EdgeConfig {
  const int = (name: string, def: number, min: number, max: number): number => {
    const v = env[name]?.trim();
    if (!v) return def;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${v}")`);
    }
    return Number(v);
  };
  return {
    cors: { origins: parseOrigins(env.CORS_ORIGINS) },
    caps: {
      connectionsPerClient: int('MAX_CONNECTIONS_PER_CLIENT', DEFAULT_CAPS.connectionsPerClient, 1, 1_000_000),
      subscriptionsPerConnection: int('MAX_SUBSCRIPTIONS_PER_CONNECTION', DEFAULT_CAPS.subscriptionsPerConnection, 1, 1_000_000),
      maxBufferedBytes: int('MAX_WS_BUFFERED_BYTES', DEFAULT_CAPS.maxBufferedBytes, 1024, 2 ** 40),
    },
  };
}

/** `CORS_ORIGINS`: comma-separated exact origins, e.g. `https://review.example.com,http://localhost:5173`. */
export function parseOrigins(value: string | undefined): string[] {
  const out: string[] = [];
  for (const raw of (value ?? '').split(',')) {
    const v = raw.trim();
    if (!v) continue;
    let u: URL | null = null;
    try { u = new URL(v); } catch { /* reported below */ }
    if (!u || !['http:', 'https:'].includes(u.protocol) || u.origin !== v.replace(/\/$/, '')) {
      throw new ConfigError(`CORS_ORIGINS must list origins such as https://app.example.com, comma-separated (got "${v}")`);
    }
    out.push(u.origin);
  }
  return out;
}
