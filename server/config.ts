import path from 'node:path';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import type { GatewayConfig } from './gateway.js';
import type { TokenCacheOptions } from './token-cache.js';

/** A bad option: one line naming the variable, what it must be and what it was. */
export class ConfigError extends Error {}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Every option of `gateway serve`, read from the environment (README, "Configuration"). */
export interface Config {
  port: number;
  host: string;
  /** Unset: the embedded PostgreSQL in `dataDir`. */
  databaseUrl: string | undefined;
  dbPool: number;
  dataDir: string;
  embeddedPgPort: number;
  logLevel: LogLevel;
  limits: Limits;
  tokenCache: Required<TokenCacheOptions>;
  gateway: Required<GatewayConfig>;
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
 * line, on the first bad value; unset or empty variables take their defaults.
 */
export function loadConfig(env: Env = process.env, projectDir = process.cwd()): Config {
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
  const metricsToken = str('METRICS_TOKEN');
  if (metricsToken !== undefined && metricsToken.length < 16) throw new ConfigError('METRICS_TOKEN must be at least 16 characters');

  return {
    port,
    host,
    databaseUrl,
    dbPool: int('DB_POOL', 20, 2, 1_000),
    dataDir: path.resolve(projectDir, str('GATEWAY_DATA_DIR') ?? path.join('.data', 'pg')),
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
      retentionIntervalMs: int('RETENTION_INTERVAL_MS', 600_000, 0, 86_400_000),
      feedPollMs: int('FEED_POLL_MS', 5_000, 0, 3_600_000),
      sealMaxTimeoutMs: int('SEAL_MAX_TIMEOUT_MS', 120_000, 1, 86_400_000),
      hostRequestMaxTimeoutMs: int('HOST_REQUEST_MAX_TIMEOUT_MS', 120_000, 1, 86_400_000),
      hostRequestRetentionMs: int('HOST_REQUEST_RETENTION_MS', 86_400_000, 0, 365 * 86_400_000),
    },
    metrics: { token: metricsToken, port: metricsPort },
  };
}
