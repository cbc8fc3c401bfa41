import os from 'node:os';
import { embeddedDataDir } from './data-dir.js';
import { PROJECT_DIR } from './version.js';

/** The embedded PostgreSQL's data folder of this package when GATEWAY_DATA_DIR is unset (`~` for the home folder). */
function defaultDataDir(): string {
  const dir = embeddedDataDir(PROJECT_DIR, { ...process.env, GATEWAY_DATA_DIR: '' });
  const home = os.homedir();
  return home && dir.startsWith(home + '/') ? `~${dir.slice(home.length)}` : dir;
}

/**
 * The environment variables of `gateway serve` (read by server/config.ts), for `gateway serve --help`: one
 * short line each. The Configuration table of docs/running.md says more about each; test/cli-help.test.ts checks that
 * the two list the same variables.
 */
export const ENVIRONMENT: readonly { name: string; default: string; what: string }[] = [
  { name: 'PORT', default: '4000', what: 'HTTP and WebSocket port (0: any free one)' },
  { name: 'HOST', default: '127.0.0.1', what: 'address to listen on' },
  { name: 'DATABASE_URL', default: 'unset', what: 'postgres://…; unset: the embedded PostgreSQL' },
  { name: 'DB_POOL', default: '20', what: 'connections of the pool (2–1000)' },
  { name: 'DB_CONNECT_TIMEOUT_MS', default: '10000', what: 'how long a connection to the database may take before it is given up (100–600000)' },
  { name: 'GATEWAY_DATA_DIR', get default() { return defaultDataDir(); }, what: 'the embedded PostgreSQL\'s data folder' },
  { name: 'EMBEDDED_PG_PORT', default: '54329', what: 'the embedded PostgreSQL\'s port (a free one if taken)' },
  { name: 'LOG_LEVEL', default: 'info', what: 'fatal, error, warn, info, debug, trace or silent' },
  { name: 'MAX_DEPTH', default: '12', what: 'operation depth limit' },
  { name: 'MAX_ALIASES', default: '30', what: 'aliases per operation' },
  { name: 'MAX_TOKENS', default: '5000', what: 'tokens per document' },
  { name: 'MAX_COST', default: '250000', what: 'objects an operation may ask for (page-aware)' },
  { name: 'TOKEN_CACHE_TTL_MS', default: '60000', what: 'how long an authenticated token is cached (0: ask the database every time)' },
  { name: 'TOKEN_CACHE_MAX', default: '10000', what: 'tokens cached' },
  { name: 'LEASE_SWEEP_MS', default: '1000', what: 'how often lapsed host leases are swept (0: never)' },
  { name: 'LEASE_SWEEP_WINDOW_MS', default: '120000', what: 'after the first sweep, only leases lapsed this recently (0: all)' },
  { name: 'SEQUENCER_SAFETY_MS', default: '60000', what: 'the settlement sequencer\'s safety pass (0: never)' },
  { name: 'RETENTION_INTERVAL_MS', default: '600000', what: 'how often retention runs (0: never)' },
  { name: 'FEED_POLL_MS', default: '5000', what: 'safety poll of subscription feeds (0: off)' },
  { name: 'SEAL_MAX_TIMEOUT_MS', default: '120000', what: 'cap of sealSession\'s timeoutMs' },
  { name: 'HOST_REQUEST_MAX_TIMEOUT_MS', default: '120000', what: 'cap of compactSession\'s and generate\'s timeoutMs' },
  { name: 'HOST_REQUEST_RETENTION_MS', default: '86400000', what: 'how long a closed compaction or generation request keeps its prompt and reply' },
  { name: 'METRICS_TOKEN', default: 'unset', what: 'serve /metrics on the main port to this bearer token (16+ characters)' },
  { name: 'METRICS_PORT', default: 'unset', what: 'serve /metrics without a token on this port' },
  { name: 'CORS_ORIGINS', default: 'none', what: 'comma-separated origins whose browser pages may call the gateway' },
  { name: 'MAX_CONNECTIONS_PER_CLIENT', default: '128', what: 'open TCP connections from one address' },
  { name: 'MAX_SUBSCRIPTIONS_PER_CONNECTION', default: '100', what: 'operations at once on one WebSocket' },
  { name: 'MAX_WS_BUFFERED_BYTES', default: '16 MiB', what: 'unsent bytes of a WebSocket before it is closed as a slow consumer' },
  { name: 'TRUSTED_DOCUMENTS_ONLY', default: '0', what: '1: run only trusted documents (by hash); admins may still send any' },
  { name: 'TRUSTED_DOCUMENTS', default: 'none', what: 'comma-separated JSON files of hash → document, trusted beside the client\'s' },
  { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', default: 'unset', what: 'export every settled execution as an OpenTelemetry GenAI trace to this OTLP/HTTP endpoint (/v1/traces appended)' },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', default: 'unset', what: 'the traces URL itself (instead of the one above)' },
  { name: 'OTEL_EXPORTER_OTLP_HEADERS', default: 'none', what: 'key=value pairs sent with each export (percent-encoded, comma-separated)' },
  { name: 'OTEL_EXPORTER_OTLP_PROTOCOL', default: 'http/protobuf', what: 'http/protobuf or http/json' },
  { name: 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', default: 'false', what: 'true: traces carry message text, tool arguments and results' },
  { name: 'OTEL_SERVICE_NAME', default: 'agent-history-gateway', what: 'the traces\' service.name' },
];

/** The variables as `gateway serve --help` prints them. */
export function environmentHelp(): string {
  const width = Math.max(...ENVIRONMENT.map((v) => v.name.length)) + 2;
  const lines = ENVIRONMENT.map((v) => `  ${v.name.padEnd(width)}${v.what} (default: ${v.default})`);
  return `\nEnvironment (every option of serve; a bad value stops the start naming the variable, exit code 2):\n${lines.join('\n')}\n`;
}
