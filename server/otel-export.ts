import type { HrTime, SpanContext } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Gauge, type Registry } from 'prom-client';
import { ADVISORY_LOCKS } from '../db/advisory-locks.js';
import type { Sql } from '../db/connection.js';
import { SYSTEM } from '../domain/access.js';
import { readSettlements } from '../domain/settlements.js';
import { executionTraces, type TraceSpan } from '../domain/traces.js';
import type { PgBus } from '../subscriptions/bus.js';
import type { Logger } from './logging.js';
import { VERSION } from './version.js';

/**
 * The OpenTelemetry trace export (docs/analytics.md, "OpenTelemetry traces"): every settled execution, in the settlement
 * log's order, as a trace of the GenAI semantic conventions (domain/traces.ts), sent with the OpenTelemetry
 * JS SDK's OTLP/HTTP exporters (protobuf or JSON).
 *
 * Driven by the settlement log with a durable cursor (`export_cursors`, row 'otel'): a pass takes the
 * exporter's advisory lock in a transaction (db/advisory-locks.ts otelExport; another instance holding it
 * makes this one's pass a no-op), reads the cursor and the next settlements after it, exports their traces
 * and advances the cursor in the same transaction. So a restart resumes where the last committed pass
 * stopped, several instances send each execution once, and a pass whose export failed leaves the cursor
 * where it was (tried again after a backoff). A pass whose export succeeded but whose commit was lost sends
 * the same traces again: their IDs are derived from the execution IDs, so the receiver gets the same spans.
 *
 * Passes run on the settlement head notice, when the listening connection comes back, and on a safety poll.
 */
export interface OtelExportConfig {
  /** The traces endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces). */
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  headers: Record<string, string>;
  /** Message content, tool arguments and results (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT). Off by default. */
  captureContent: boolean;
  serviceName: string;
  /** Resource attributes besides service.name (OTEL_RESOURCE_ATTRIBUTES). */
  resourceAttributes?: Record<string, string>;
  /** Executions per pass (one OTLP request). Default 200, 20 with content (message text makes requests large). */
  batch?: number;
  /** Safety poll (ms). Default 5000. */
  pollMs?: number;
  /** An export request's timeout (OTEL_EXPORTER_OTLP_TIMEOUT, ms). Default 10000. */
  timeoutMs?: number;
}

/** Which exporter the cursor belongs to: one row of export_cursors. */
const CURSOR = 'otel';

export class OtelExport {
  private exporter: SpanExporter;
  private offs: (() => void)[] = [];
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private failures = 0;
  private retry: NodeJS.Timeout | null = null;
  private readonly resource;
  /** Executions this instance has exported (tests, logs). */
  exported = 0;
  private get batch(): number { return this.config.batch ?? (this.config.captureContent ? 20 : 200); }

  constructor(private sql: Sql, private bus: PgBus, private log: Logger, readonly config: OtelExportConfig) {
    const options = { url: config.url, headers: config.headers, timeoutMillis: config.timeoutMs ?? 10_000 };
    this.exporter = config.protocol === 'http/json' ? new JsonExporter(options) : new ProtoExporter(options);
    this.resource = resourceFromAttributes({
      ...config.resourceAttributes,
      'service.name': config.serviceName,
      'service.version': VERSION,
    });
  }

  start(): void {
    this.stopped = false;
    this.offs.push(this.bus.on('settlements', () => this.poke()));
    this.offs.push(this.bus.onResync(() => this.poke()));
    const pollMs = this.config.pollMs ?? 5_000;
    if (pollMs > 0) {
      this.timer = setInterval(() => this.poke(), pollMs);
      this.timer.unref();
    }
    this.poke();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const off of this.offs.splice(0)) off();
    if (this.timer) clearInterval(this.timer);
    if (this.retry) clearTimeout(this.retry);
    await this.running?.catch(() => {});
    await this.exporter.shutdown().catch(() => {});
  }

  /** Passes that failed since the last one that succeeded (a send refused, the database away). */
  get failing(): number { return this.failures; }

  /**
   * Its metrics in the instance's registry (/metrics): executions this instance exported, failed passes in a
   * row, and the lag (settlements not yet exported: the log's head minus the cursor; one read per scrape).
   */
  registerMetrics(registry: Registry): void {
    const registers = [registry];
    const self = this;
    new Gauge({ name: 'gateway_otel_exported_executions', help: 'Executions this instance exported as traces (a counter).', registers, collect() { this.set(self.exported); } });
    new Gauge({ name: 'gateway_otel_export_failing_passes', help: 'Export passes that failed in a row (0: the last one succeeded).', registers, collect() { this.set(self.failures); } });
    new Gauge({
      name: 'gateway_otel_export_lag', help: 'Settlements not yet exported as traces (the log head minus the export cursor).', registers,
      async collect() {
        const [r] = await self.sql<{ lag: number }[]>`
          SELECT greatest(0, (SELECT coalesce(max(pos), 0) FROM settlements) - coalesce((SELECT pos FROM export_cursors WHERE name = ${CURSOR}), 0)) AS lag`;
        this.set(Number(r.lag));
      },
    });
  }

  /** Runs passes until the log is exported (or another instance holds the lock); one loop at a time. */
  poke(): void {
    if (this.stopped) return;
    if (this.running) { this.again = true; return; }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          for (;;) {
            const r = await this.pass();
            if (r === 'busy' || r.count < this.batch) break;
          }
        } while (this.again && !this.stopped);
        this.failures = 0;
      } catch (err) {
        this.failures++;
        const delay = Math.min(30_000, 250 * 2 ** Math.min(this.failures, 7));
        this.log.warn({ err, retryInMs: delay }, 'otel export: pass failed (tried again)');
        if (!this.stopped) {
          this.retry = setTimeout(() => { this.retry = null; this.poke(); }, delay);
          this.retry.unref();
        }
      } finally {
        this.running = null;
      }
    })();
  }

  /** Runs until every settlement visible now is exported (tests, shutdown); 'busy' passes are tried again. */
  async drain(): Promise<void> {
    for (;;) {
      const r = await this.pass();
      if (r !== 'busy' && r.count === 0) return;
      if (r === 'busy') await new Promise((res) => setTimeout(res, 20));
    }
  }

  /**
   * One pass: under the exporter's lock, the next settlements after the cursor, exported, and the cursor
   * moved past them. 'busy' when another instance (or another pass of this one) holds the lock.
   */
  async pass(): Promise<'busy' | { count: number; pos: number }> {
    const batch = this.batch;
    return this.sql.begin(async (tx) => {
      const [{ locked }] = await tx<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(${ADVISORY_LOCKS.otelExport}) AS locked`;
      if (!locked) return 'busy' as const;
      await tx`INSERT INTO export_cursors (name) VALUES (${CURSOR}) ON CONFLICT (name) DO NOTHING`;
      const [{ pos }] = await tx<{ pos: number }[]>`SELECT pos FROM export_cursors WHERE name = ${CURSOR} FOR UPDATE`;
      const rows = await readSettlements(tx, SYSTEM, { after: Number(pos), limit: batch });
      if (!rows.length) return { count: 0, pos: Number(pos) };
      const traces = await executionTraces(tx, rows.map((r) => ({ sessionId: r.sessionId, executionId: r.executionId })), {
        content: this.config.captureContent,
      });
      const spans = traces.flat().map((s) => this.readable(s));
      if (spans.length) await this.send(spans);
      const top = rows[rows.length - 1].pos;
      await tx`UPDATE export_cursors SET pos = ${top}, exported = exported + ${traces.length}, updated_at = now() WHERE name = ${CURSOR}`;
      this.exported += traces.length;
      this.log.debug({ executions: traces.length, spans: spans.length, pos: top }, 'otel export: traces sent');
      return { count: rows.length, pos: top };
    });
  }

  private send(spans: ReadableSpan[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.exporter.export(spans, (r: ExportResult) => {
        if (r.code === ExportResultCode.SUCCESS) resolve();
        else reject(r.error ?? new Error('the OTLP export failed'));
      });
    });
  }

  private readable(s: TraceSpan): ReadableSpan {
    const ctx = (spanId: string): SpanContext => ({ traceId: s.traceId, spanId, traceFlags: 1, isRemote: false });
    const startTime = hr(s.startMs);
    const endTime = hr(s.endMs);
    return {
      name: s.name,
      kind: s.kind,
      spanContext: () => ctx(s.spanId),
      parentSpanContext: s.parentSpanId ? ctx(s.parentSpanId) : undefined,
      startTime,
      endTime,
      duration: hr(s.endMs - s.startMs),
      status: s.status,
      attributes: s.attributes,
      links: [],
      events: [],
      ended: true,
      resource: this.resource,
      instrumentationScope: { name: 'agent-history-gateway', version: VERSION },
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  }
}

const hr = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

type Env = Record<string, string | undefined>;

/**
 * The export's configuration from the standard OpenTelemetry variables, or null when no endpoint is set (or
 * OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none). Throws `fail(message)` for a bad value.
 */
export function loadOtelConfig(env: Env, fail: (message: string) => Error): OtelExportConfig | null {
  const str = (n: string) => { const v = env[n]?.trim(); return v ? v : undefined; };
  if (str('OTEL_SDK_DISABLED')?.toLowerCase() === 'true' || str('OTEL_TRACES_EXPORTER')?.toLowerCase() === 'none') return null;
  const tracesEndpoint = str('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = str('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (!tracesEndpoint && !endpoint) return null;
  const url = tracesEndpoint ?? `${endpoint!.replace(/\/+$/, '')}/v1/traces`;
  try {
    if (!['http:', 'https:'].includes(new URL(url).protocol)) throw new Error();
  } catch {
    throw fail(`${tracesEndpoint ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT'} must be an http:// or https:// URL`);
  }
  const protocolVar = str('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = str(protocolVar) ?? 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw fail(`${protocolVar} must be http/protobuf or http/json (got "${protocol}"; grpc is not supported)`);
  }
  const headers = { ...parsePairs(str('OTEL_EXPORTER_OTLP_HEADERS'), 'OTEL_EXPORTER_OTLP_HEADERS', fail), ...parsePairs(str('OTEL_EXPORTER_OTLP_TRACES_HEADERS'), 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', fail) };
  const timeout = str('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ?? str('OTEL_EXPORTER_OTLP_TIMEOUT');
  if (timeout !== undefined && (!/^\d+$/.test(timeout) || Number(timeout) < 1)) throw fail(`OTEL_EXPORTER_OTLP_TIMEOUT must be a positive integer of milliseconds (got "${timeout}")`);
  const content = (str('OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT') ?? 'false').toLowerCase();
  if (!['true', 'false'].includes(content)) throw fail(`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT must be true or false (got "${content}")`);
  const resourceAttributes = parsePairs(str('OTEL_RESOURCE_ATTRIBUTES'), 'OTEL_RESOURCE_ATTRIBUTES', fail);
  return {
    url, protocol, headers,
    captureContent: content === 'true',
    serviceName: str('OTEL_SERVICE_NAME') ?? resourceAttributes['service.name'] ?? 'agent-history-gateway',
    resourceAttributes,
    timeoutMs: timeout === undefined ? undefined : Number(timeout),
  };
}

/** `key=value,key2=value2` with percent-encoded values (the OTLP exporter's header format). Values are never echoed. */
function parsePairs(v: string | undefined, name: string, fail: (m: string) => Error): Record<string, string> {
  const out: Record<string, string> = {};
  if (!v) return out;
  for (const pair of v.split(',')) {
    if (!pair.trim()) continue;
    const i = pair.indexOf('=');
    if (i <= 0) throw fail(`${name} must be key=value pairs separated by commas`);
    try {
      out[decodeURIComponent(pair.slice(0, i).trim())] = decodeURIComponent(pair.slice(i + 1).trim());
    } catch {
      throw fail(`${name} must be key=value pairs separated by commas, percent-encoded`);
    }
  }
  return out;
}
