import path from 'node:path';
import { embeddedDataDir } from './data-dir.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import { PROJECT_DIR } from './version.js';
import type { GatewayConfig } from './gateway.js';
import type { TokenCacheOptions } from './token-cache.js';
import { loadOtelConfig, type OtelExportConfig } from './otel-export.js';
import { ManifestError, readManifest, type TrustedDocumentsConfig } from './trusted-documents.js';

/** A bad option: one line naming the variable, what it must be and what it was. */
export class ConfigError extends Error {}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Every option of `gateway serve`, read from the environment (docs/running.md, "Configuration"). */
export interface Config {
  port: number;
  host: string;
  /** Unset: the embedded PostgreSQL in `dataDir`. */
  databaseUrl: string | undefined;
  dbPool: number;
  /** How long connecting to the database may take (ms) before the attempt is given up (DB_CONNECT_TIMEOUT_MS). */
  dbConnectTimeoutMs: number;
  /** The embedded PostgreSQL's data folder (server/data-dir.ts: `.data/pg` of a checkout, the user's data folder of an install). */
  dataDir: string;
  embeddedPgPort: number;
  logLevel: LogLevel;
  limits: Limits;
  tokenCache: Required<TokenCacheOptions>;
  gateway: Required<GatewayConfig>;
  /** Cross-origin access and per-client caps (CORS_ORIGINS, MAX_*; see loadEdgeConfig below). */
  cors: CorsConfig;
  caps: CapsConfig;
  /** Trusted documents: TRUSTED_DOCUMENTS_ONLY, TRUSTED_DOCUMENTS (server/trusted-documents.ts). */
  trustedDocuments: TrustedDocumentsConfig;
  /** The OpenTelemetry trace export: OTEL_EXPORTER_OTLP_* (server/otel-export.ts); null: off. */
  otel: OtelExportConfig | null;
  metrics: {
    /** Bearer token that `/metrics` on the main port requires (unset: not served there). */
    token: string | undefined;
    /** A port of its own for `/metrics`, without a token (on `host`; unset: none). */
    port: number | undefined;
  };
}

type Env = Record<string, string | undefined>;

/**
 * Reads and validates every option from the environment. Throws ConfigError, whose message is one
 * line, on the first bad value; unset or empty variables take their defaults. `packageDir` is the
 * gateway's package folder (a checkout or an installed copy), which decides where its data lives.
 */
export function loadConfig(env: Env = process.env, packageDir = PROJECT_DIR, cwd = process.cwd()): Config {
  const str = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  const int = (name: string, def: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const v = str(name);
    if (v === undefined) return def;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      throw new ConfigError(`${name} must be an integer from ${min} to ${max === Number.MAX_SAFE_INTEGER ? 'any size' : max} (got "${v}")`);
    }
    return Number(v);
  };
  const optionalInt = (name: string, min: number, max: number): number | undefined =>
    str(name) === undefined ? undefined : int(name, 0, min, max);

  const databaseUrl = str('DATABASE_URL');
  if (databaseUrl) {
    let ok = false;
    try { ok = ['postgres:', 'postgresql:'].includes(new URL(databaseUrl).protocol); } catch { /* not a URL */ }
    if (!ok) throw new ConfigError('DATABASE_URL must be a postgres:// URL (got something else; it is not echoed, it may hold a password)');
  }
  const logLevel = (str('LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${str('LOG_LEVEL')}")`);
  }
  const host = str('HOST') ?? '127.0.0.1';
  if (!/^[\w.:-]+$/.test(host)) throw new ConfigError(`HOST must be an address or host name (got "${host}")`);
  const port = int('PORT', 4000, 0, 65_535);
  const metricsPort = optionalInt('METRICS_PORT', 1, 65_535);
  if (metricsPort !== undefined && metricsPort === port) throw new ConfigError(`METRICS_PORT must differ from PORT (both ${port})`);
  const trustedOnly = str('TRUSTED_DOCUMENTS_ONLY') ?? '0';
  if (!['0', '1'].includes(trustedOnly)) throw new ConfigError(`TRUSTED_DOCUMENTS_ONLY must be 0 or 1 (got "${trustedOnly}")`);
  const trustedFiles = (str('TRUSTED_DOCUMENTS') ?? '').split(',').map((f) => f.trim()).filter(Boolean).map((f) => path.resolve(cwd, f));
  for (const file of trustedFiles) {
    try { readManifest(file); } catch (e) {
      if (e instanceof ManifestError) throw new ConfigError(`TRUSTED_DOCUMENTS must list JSON files of hash → document: ${e.message}`);
      throw e;
    }
  }
  const metricsToken = str('METRICS_TOKEN');
  if (metricsToken !== undefined && metricsToken.length < 16) throw new ConfigError('METRICS_TOKEN must be at least 16 characters');

  return {
    port,
    host,
    databaseUrl,
    dbPool: int('DB_POOL', 20, 2, 1_000),
    dbConnectTimeoutMs: int('DB_CONNECT_TIMEOUT_MS', 10_000, 100, 600_000),
    dataDir: embeddedDataDir(packageDir, env, cwd),
    embeddedPgPort: int('EMBEDDED_PG_PORT', 54329, 1, 65_535),
    logLevel: logLevel as LogLevel,
    limits: {
      maxDepth: int('MAX_DEPTH', DEFAULT_LIMITS.maxDepth, 1, 1_000),
      maxAliases: int('MAX_ALIASES', DEFAULT_LIMITS.maxAliases, 0, 10_000),
      maxTokens: int('MAX_TOKENS', DEFAULT_LIMITS.maxTokens, 100, 1_000_000),
      maxCost: int('MAX_COST', DEFAULT_LIMITS.maxCost, 1, 1_000_000_000),
    },
    tokenCache: {
      ttlMs: int('TOKEN_CACHE_TTL_MS', 60_000, 0, 86_400_000),
      maxEntries: int('TOKEN_CACHE_MAX', 10_000, 0, 10_000_000),
    },
    gateway: {
      sweepIntervalMs: int('LEASE_SWEEP_MS', 1_000, 0, 3_600_000),
      sweepWindowMs: int('LEASE_SWEEP_WINDOW_MS', 120_000, 0, 86_400_000),
      sequencerSafetyMs: int('SEQUENCER_SAFETY_MS', 60_000, 0, 3_600_000),
      retentionIntervalMs: int('RETENTION_INTERVAL_MS', 600_000, 0, 86_400_000),
      feedPollMs: int('FEED_POLL_MS', 5_000, 0, 3_600_000),
      sealMaxTimeoutMs: int('SEAL_MAX_TIMEOUT_MS', 120_000, 1, 86_400_000),
      hostRequestMaxTimeoutMs: int('HOST_REQUEST_MAX_TIMEOUT_MS', 120_000, 1, 86_400_000),
      hostRequestRetentionMs: int('HOST_REQUEST_RETENTION_MS', 86_400_000, 0, 365 * 86_400_000),
    },
    ...loadEdgeConfig(env),
    trustedDocuments: { only: trustedOnly === '1', files: trustedFiles },
    metrics: { token: metricsToken, port: metricsPort },
    otel: loadOtelConfig(env, (m) => new ConfigError(m)),
  };
}

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

/**
 * CORS and caps, read from the environment (docs/running.md, "Configuration"): `CORS_ORIGINS`,
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
