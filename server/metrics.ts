import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Sql } from '../db/connection.js';
import type { Gateway } from './gateway.js';

const DURATIONS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120];

/**
 * Prometheus metrics of one instance (prom-client, a registry per instance so several can share a
 * process). Served as text at `/metrics`: on the main port behind METRICS_TOKEN, or on a port of its
 * own (METRICS_PORT) without one.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'transport' | 'operation' | 'type' | 'result'>;
  readonly duration: Histogram<'transport' | 'operation' | 'type'>;
  readonly subscriptionsOpen: Gauge<'operation'>;
  readonly deliveries: Counter<'operation'>;
  readonly seals: Histogram<'outcome'>;
  readonly wsConnections: Gauge;

  constructor(private sql: Sql, private gateway: Gateway, opts: { poolMax?: number; defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (opts.defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'gateway_process_' });
    this.requests = new Counter({
      name: 'gateway_requests_total', help: 'GraphQL operations by transport (http, ws), operation name, type and result (ok, errors, rejected, unauthenticated, error).',
      labelNames: ['transport', 'operation', 'type', 'result'], registers,
    });
    this.duration = new Histogram({
      name: 'gateway_request_duration_seconds', help: 'Duration of GraphQL operations (a subscription: from subscribe to its end).',
      labelNames: ['transport', 'operation', 'type'], buckets: DURATIONS, registers,
    });
    this.subscriptionsOpen = new Gauge({ name: 'gateway_subscriptions_open', help: 'Subscriptions running on this instance.', labelNames: ['operation'], registers });
    const unsent = this.uncounted;
    this.deliveries = new Counter({
      name: 'gateway_subscription_deliveries_total', help: 'Events sent to subscribers.', labelNames: ['operation'], registers,
      // Deliveries are counted in plain numbers (deliveryCount) and added here when the metric is read.
      collect() { for (const [operation, c] of unsent) if (c.n) { this.inc({ operation }, c.n); c.n = 0; } },
    });
    this.wsConnections = new Gauge({ name: 'gateway_ws_connections', help: 'Open WebSocket connections (authenticated).', registers });
    this.seals = new Histogram({
      name: 'gateway_seal_duration_seconds', help: 'sealSession by outcome (SessionSealed or the error type).',
      labelNames: ['outcome'], buckets: DURATIONS, registers,
    });
    const { bus, log } = gateway;
    new Gauge({ name: 'gateway_bus_healthy', help: '1 while the LISTEN connection is known to hear every notification.', registers, collect() { this.set(bus.healthy ? 1 : 0); } });
    new Gauge({ name: 'gateway_bus_relistens', help: 'Times the bus subscribed anew because its pings stopped (a counter).', registers, collect() { this.set(bus.relistens); } });
    new Gauge({ name: 'gateway_bus_resyncs', help: 'Times the listening connection came back and readers caught up (a counter).', registers, collect() { this.set(bus.resyncs); } });
    new Gauge({ name: 'gateway_sequencer_passes', help: 'Sequencer passes run by this instance (a counter).', registers, collect() { this.set(gateway.sequencer.passes); } });
    new Gauge({ name: 'gateway_settlement_feed_subscribers', help: 'Live subscribers of the settlement feed.', registers, collect() { this.set(gateway.settlements.subscribers); } });
    new Gauge({
      name: 'gateway_settlement_feed_lag', help: 'Positions in the settlement log not yet read by this instance\'s feed (0 while it has no subscriber).',
      registers,
      async collect() {
        if (!gateway.settlements.subscribers) { this.set(0); return; }
        try {
          const [{ head }] = await sql`SELECT coalesce(max(pos), 0) AS head FROM settlements`;
          this.set(Math.max(0, Number(head) - gateway.settlements.cursor));
        } catch (err) { log.warn({ err }, 'metrics: feed lag not read'); }
      },
    });
    new Gauge({
      name: 'gateway_settlements_unsequenced', help: 'Committed settlements still waiting for a position.', registers,
      async collect() {
        try { this.set(Number((await sql`SELECT count(*) AS n FROM settlements WHERE pos IS NULL`)[0].n)); }
        catch (err) { log.warn({ err }, 'metrics: unsequenced settlements not read'); }
      },
    });
    const poolMax = opts.poolMax ?? Number((sql.options as { max?: number }).max ?? 0);
    new Gauge({ name: 'gateway_db_pool_max', help: 'Connections the pool may open.', registers, collect() { this.set(poolMax); } });
    const appName = String((sql.options as any).connection?.application_name ?? 'agent-history-gateway');
    new Gauge({
      name: 'gateway_db_connections', help: 'Server connections of this instance\'s pool by state (pg_stat_activity, by application_name).',
      labelNames: ['state'], registers,
      async collect() {
        try {
          const rows = await sql`SELECT coalesce(state, 'unknown') AS state, count(*) AS n FROM pg_stat_activity
            WHERE application_name = ${appName} GROUP BY 1`;
          this.reset();
          this.set({ state: 'active' }, 0);
          this.set({ state: 'idle' }, 0);
          for (const r of rows) this.set({ state: String(r.state) }, Number(r.n)); // 'active' counts this query too
        } catch (err) { log.warn({ err }, 'metrics: pool usage not read'); }
      },
    });
  }

  /** Operation names used as label values; clients choose them, so their number is capped. */
  private names = new Set<string>();
  private uncounted = new Map<string, { n: number }>();

  /**
   * The delivery count of an operation (by its label): a subscription adds to `n` per event sent, and
   * the counter takes the sum when /metrics is read (no label lookup per delivery).
   */
  deliveryCount(operation: string | null | undefined): { n: number } {
    const label = this.operationLabel(operation);
    let c = this.uncounted.get(label);
    if (!c) this.uncounted.set(label, (c = { n: 0 }));
    return c;
  }
  static readonly MAX_OPERATION_NAMES = 500;

  /** The label of an operation name: itself, `anonymous`, or `other` once the cap is reached. */
  operationLabel(operation: string | null | undefined): string {
    if (!operation) return 'anonymous';
    if (this.names.has(operation)) return operation;
    if (this.names.size >= Metrics.MAX_OPERATION_NAMES || operation.length > 100) return 'other';
    this.names.add(operation);
    return operation;
  }

  /** Records one finished operation. */
  observe(transport: 'http' | 'ws', operation: string | null | undefined, type: string | undefined, result: string, seconds: number) {
    const op = this.operationLabel(operation);
    const t = type ?? 'unknown';
    this.requests.inc({ transport, operation: op, type: t, result });
    this.duration.observe({ transport, operation: op, type: t }, seconds);
  }

  async text(): Promise<string> { return this.registry.metrics(); }

  /** GET /metrics: `Authorization: Bearer <token>` when a token is set; 404 on the main port without one. */
  async serve(req: IncomingMessage, res: ServerResponse, token: string | undefined | null): Promise<void> {
    if (token !== null) {
      const given = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
      if (!token) { res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"metrics are not served on this port (set METRICS_TOKEN or METRICS_PORT)"}'); return; }
      const a = Buffer.from(given);
      const b = Buffer.from(token);
      if (a.length !== b.length || !timingSafeEqual(a, b)) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }).end('{"error":"metrics need Authorization: Bearer <METRICS_TOKEN>"}');
        return;
      }
    }
    res.writeHead(200, { 'content-type': this.registry.contentType }).end(await this.text());
  }
}
