/**
 * Settlement subscription benchmark.
 *
 *   npx tsx bench/subscriptions.ts                      # 1,000 subscribers, then 5,000
 *   SUBS=1000,2000 RATE=200 SECONDS=30 npx tsx bench/subscriptions.ts
 *   SUBS=1000 RATES=25,50,100,200 SECONDS=10 npx tsx bench/subscriptions.ts   # the p99 target: the highest rate whose baseline p99 < 20 ms
 *
 * Against DATABASE_URL (a fresh database is created on that server and dropped at the end), or the
 * embedded PostgreSQL when DATABASE_URL is unset.
 *
 * Layout: two gateway instances, each a child process (node + tsx) with its own pool and LISTEN
 * connection; a producer child process settles executions through the domain layer at a fixed rate
 * on its own pool; this process holds the WebSocket subscribers (raw `ws` speaking
 * graphql-transport-ws, spread evenly over the two instances; a closed socket reconnects and resumes
 * from its last cursor). Latency = time a subscriber received the event - time the settling
 * transaction's COMMIT returned to the producer (epoch clock, same machine). Every
 * subscriber subscribes with `after` = the log head before the run, so a late subscription cannot
 * hide a loss: lost = expected - distinct received, duplicates = received twice, order checked too.
 * Each run (gateway and baseline alike) starts with a warm-up at the same rate (WARMUP seconds,
 * default 3; WARMUP=0 measures servers straight from their start), delivered in full before the
 * measured part begins: its events are checked for loss, duplicates and order like the others, its
 * latency is printed on a line of its own, and no rate, latency or CPU figure of the run counts it.
 * Kept up = the rate was produced, deliveries went out at >= 90% of rate x subscribers, nothing was
 * left in flight after the drain.
 * Gateway CPU and memory come from process.cpuUsage()/memoryUsage() inside each child.
 * The machine's cores are shared by the gateways, Postgres, the producer and the subscribers.
 * After each gateway run, the same run against the baseline: two bare `ws` servers (child processes, no
 * GraphQL, no database) broadcasting frames of the same shape at the same rate to the same subscriber
 * process; the ratios (deliveries per second, p99) are printed at the end, with the load average.
 * BASELINE_LOAD=1: the baseline runs with the gateway run's write load too: the producer settles
 * executions at the same rate into the same database (nobody listens) while the bare servers broadcast.
 * The gateway's p99 over that baseline's is what the gateway adds to a delivery on a machine that also
 * carries the writes, rather than what the writes themselves cost everything else on two shared cores.
 *
 * CLOCK_WAIT_MS=n: how long a settling commit waits for a busy settlement clock before leaving its row
 * to the sequencer (gateway.settlement_clock_wait_ms on the scratch database; default 20, 0 = never).
 * BENCH_TRACE=1: stage timings inside the gateways (staged notice, sequencer pass, head notice, feed
 * read or rows given to the feed, hand-out, socket) and the sequencer's passes (positioned / empty / busy;
 * staged notices and passes concern only the settlements their own commit could not position, migration
 * 056); BENCH_TRACE_OUT=file
 * appends every traced settlement as JSON. BENCH_GATEWAY_FLAGS: node flags for both gateway children
 * (e.g. --trace-gc); BENCH_GATEWAY_FLAGS_1: other flags for the second one, an A/B of node settings
 * under the same load (latency is also printed per instance).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { connect, type Sql } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { openDatabase } from '../db/index.js';
import { createScratchDatabase } from '../db/scratch.js';
import { decodeCursor, encodeCursor } from '../resolvers/cursors.js';
import { ensureBuilt, gatewayModule } from './support/gateway-code.js';

const CHILD = process.argv.includes('--child');
const BASELINE_LOAD = process.env.BASELINE_LOAD === '1';

async function child() {
  const { buildApp } = await import(gatewayModule('server/app.js')) as typeof import('../server/app.js');
  const { sharedStats } = await import(gatewayModule('subscriptions/shared.js')) as typeof import('../subscriptions/shared.js');
  const { connect: connectGateway } = await import(gatewayModule('db/connection.js')) as typeof import('../db/connection.js');
  const url = process.env.BENCH_DB_URL!;
  const sql = connectGateway(url, { max: 10, applicationName: 'bench-gateway' });
  // Thousands of subscribers come from this one machine: lift the per-client connection cap.
  const app = buildApp({ sql, gateway: { sweepIntervalMs: 0 }, caps: { connectionsPerClient: 1_000_000 } });
  await app.start();
  const trace = process.env.BENCH_TRACE === '1' ? traceStages(app) : null;
  let cpu0 = process.cpuUsage();
  let t0 = performance.now();
  let peakRss = 0;
  const sampler = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage().rss); }, 250);
  process.on('message', async (m: any) => {
    if (m === 'mark') {
      cpu0 = process.cpuUsage();
      t0 = performance.now();
      peakRss = process.memoryUsage().rss;
      sharedStats.executed = sharedStats.reused = 0;
      process.send!({ type: 'marked' });
    } else if (m === 'stats') {
      const c = process.cpuUsage(cpu0);
      const mem = process.memoryUsage();
      peakRss = Math.max(peakRss, mem.rss);
      process.send!({
        type: 'stats',
        cpuMs: (c.user + c.system) / 1000,
        wallMs: performance.now() - t0,
        rss: mem.rss,
        peakRss,
        heapUsed: mem.heapUsed,
        subscribers: app.gateway.settlements.subscribers,
        feedReads: app.gateway.settlements.reads,
        executed: sharedStats.executed,
        reused: sharedStats.reused,
        passes: trace?.passes() ?? null,
        trace: trace?.take() ?? null,
      });
    } else if (m === 'stop') {
      clearInterval(sampler);
      await app.stop().catch(() => {});
      await sql.end({ timeout: 1 });
      process.exit(0);
    }
  });
  process.on('disconnect', () => process.exit(0)); // the bench went away
  if (process.env.BENCH_GATEWAY_FLAGS || process.env.BENCH_GATEWAY_FLAGS_1) console.error(`gateway pid ${process.pid}: node ${process.execArgv.filter((a) => a.startsWith('--') && a !== '--import').join(' ')}`);
  process.send!({ type: 'ready', port: app.port });
}

const now = () => performance.timeOrigin + performance.now();

/**
 * BENCH_TRACE=1: where a settlement's time goes inside one gateway instance, per settlement (epoch ms):
 * the staged notice that woke the sequencer (the last one before the head notice), the head notice
 * ("settlement log moved to p", sent by the sequencer pass that positioned it), the feed read that
 * returned it (start, end), the feed's hand-out to its subscribers, and the first and last WebSocket
 * message of it queued on a socket of this instance. The bench subtracts the commit time.
 */
function traceStages(app: Awaited<ReturnType<typeof import('../server/app.js')['buildApp']>>) {
  type Rec = { exec: string; readStart: number; readEnd: number; dispatch?: number; first?: number; last?: number; sends: number };
  const heads: [number, number][] = [];
  const staged: number[] = [];
  let rows = new Map<number, Rec>();
  app.gateway.bus.on('settlements', (n) => heads.push([(n as { p: number }).p, now()]));
  app.gateway.bus.on('settlements:staged', () => staged.push(now()));
  // The sequencer's passes on this instance: [start, end, top, count] (busy passes: count -1).
  const passes: [number, number, number, number][] = [];
  const seq = app.gateway.sequencer as unknown as { sql: (...a: unknown[]) => PromiseLike<{ busy: boolean; n: number; top: string }[]> };
  const seqSql = seq.sql;
  seq.sql = (...a: unknown[]) => {
    const t = now();
    const q = seqSql(...a);
    q.then((r) => { const x = r[0]; passes.push([t, now(), Number(x.top), x.busy ? -1 : x.n]); }, () => {});
    return q;
  };
  const feed = app.gateway.settlements as unknown as { read: (a: number, l: number) => Promise<{ pos: number; executionId: string }[]> };
  const read = feed.read;
  feed.read = async (after, limit) => {
    const t = now();
    const got = await read(after, limit);
    const t2 = now();
    for (const r of got) rows.set(r.pos, { exec: r.executionId, readStart: t, readEnd: t2, sends: 0 });
    return got;
  };
  // Rows handed to the feed without a read (the pass's own answer, a head notice's rows): "read" when given.
  const given = app.gateway.settlements as unknown as { offer: (rs: { pos: number; executionId: string }[], after: number) => void };
  const offer = given.offer.bind(given);
  given.offer = (rs, after) => {
    const t = now();
    for (const r of rs) if (!rows.has(r.pos)) rows.set(r.pos, { exec: r.executionId, readStart: t, readEnd: t, sends: 0 });
    offer(rs, after);
  };
  void app.gateway.settlements.add((r) => { const x = rows.get(r.pos); if (x) x.dispatch = now(); });
  // Messages reach a socket through its ws.send (subscriptions/delivery.ts looks it up at each message): watched.
  const sent = (data: unknown) => {
    if (typeof data === 'string' && data.includes('"executionSettled"')) {
      const ci = data.indexOf('"cursor":"');
      const x = rows.get(decodeCursor('settlement', data.slice(ci + 10, data.indexOf('"', ci + 10)))!);
      if (x) { const t = now(); x.first ??= t; x.last = t; x.sends++; }
    }
  };
  app.wss.on('connection', (ws: WebSocket) => {
    const send = ws.send;
    (ws as any).send = function (data: unknown, ...rest: unknown[]) {
      sent(data);
      return (send as any).call(this, data, ...rest);
    };
  });
  return {
    take() {
      const out = [...rows].map(([pos, r]) => {
        const h = heads.find(([p]) => p >= pos);
        const st = h ? staged.filter((t) => t <= h[1]).pop() : undefined;
        // The pass that positioned it, when this instance ran it.
        const ps = passes.find(([, , top, n]) => n > 0 && top >= pos && top - n < pos);
        return { pos, ...r, head: h?.[1], staged: st, passStart: ps?.[0], passEnd: ps?.[1], busyBefore: ps ? passes.filter((x) => x[3] < 0 && x[1] <= ps[0] && x[0] >= (st ?? Infinity)).length : undefined };
      });
      rows = new Map();
      passes.length = 0;
      return out;
    },
    /** This instance's sequencer passes since the last call: positioned / empty / busy, with the p50 and max duration of each. */
    passes() {
      const kinds = { positioned: passes.filter((x) => x[3] > 0), empty: passes.filter((x) => x[3] === 0), busy: passes.filter((x) => x[3] < 0) };
      return Object.entries(kinds).map(([k, l]) => {
        const d = l.map((x) => x[1] - x[0]).sort((a, b) => a - b);
        return `${k} ${l.length}` + (d.length ? ` (${d[Math.floor(d.length / 2)].toFixed(1)}/${d[d.length - 1].toFixed(1)} ms)` : '');
      }).join(', ');
    },
  };
}

/**
 * The baseline: a bare `ws` server (no GraphQL, no database) that answers the graphql-transport-ws
 * handshake and, when told, broadcasts the frames the gateway sends for `executionSettled { cursor
 * executionID }` (same shape and size) to every subscribed socket at the given rate: what the
 * machine, the sockets and the client process can carry at best. It reports when it sent each event
 * (the "commit" of its events) so latency is measured the same way.
 */
async function baselineChild() {
  const { WebSocketServer } = await import('ws');
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: () => 'graphql-transport-ws' });
  const subscribed = new Map<WebSocket, string>();
  wss.on('connection', (ws: WebSocket) => {
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.type === 'connection_init') ws.send('{"type":"connection_ack"}');
      else if (m.type === 'subscribe') subscribed.set(ws, m.id);
      else if (m.type === 'ping') ws.send('{"type":"pong"}');
    });
    ws.on('close', () => subscribed.delete(ws));
  });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  let cpu0 = process.cpuUsage();
  let t0 = performance.now();
  const tag = process.env.BENCH_BASELINE_TAG ?? '0';
  process.on('message', (m: any) => {
    if (m === 'mark') { cpu0 = process.cpuUsage(); t0 = performance.now(); process.send!({ type: 'marked' }); }
    else if (m === 'stats') {
      const c = process.cpuUsage(cpu0);
      const mem = process.memoryUsage();
      process.send!({ type: 'stats', cpuMs: (c.user + c.system) / 1000, wallMs: performance.now() - t0, rss: mem.rss, peakRss: mem.rss, heapUsed: mem.heapUsed,
        subscribers: subscribed.size, feedReads: 0, executed: 0, reused: 0 });
    } else if (m === 'stop') { for (const c of wss.clients) c.terminate(); wss.close(); process.exit(0); }
    else if (m?.type === 'go') {
      // `from`: events this server already sent in an earlier phase of the run (the warm-up).
      const { rate, seconds, head, from = 0 } = m as { rate: number; seconds: number; head: number; from?: number };
      const total = Math.round(rate * seconds);
      const start = performance.now();
      let sent = 0;
      let batch: [string, number][] = [];
      const flush = setInterval(() => { if (batch.length) { process.send!({ type: 'commits', list: batch }); batch = []; } }, 50);
      const tick = () => {
        const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
        while (sent < due) {
          sent++;
          const exec = `exe_baseline${tag}_${from + sent}`;
          const at = now();
          for (const [ws, id] of subscribed) {
            ws.send(`{"id":${JSON.stringify(id)},"type":"next","payload":{"data":{"executionSettled":{"cursor":"${encodeCursor('settlement', head + from + sent)}","executionID":"${exec}"}}}}`);
          }
          batch.push([exec, at]);
        }
        if (sent >= total) {
          clearInterval(flush);
          if (batch.length) process.send!({ type: 'commits', list: batch });
          process.send!({ type: 'done', done: sent, failed: 0, skipped: 0, behind: 0, produceMs: performance.now() - start });
          return;
        }
        setTimeout(tick, 2);
      };
      tick();
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ type: 'ready', port: (wss.address() as { port: number }).port });
}

async function producer() {
  const { beginExecution, settleExecution } = await import('../domain/executions.js');
  const { SYSTEM } = await import('../domain/access.js');
  const sql = connect(process.env.BENCH_DB_URL!, { max: 20, applicationName: 'bench-producer' });
  process.on('disconnect', () => { void sql.end({ timeout: 1 }).finally(() => process.exit(0)); });
  // One message per phase of the run (the warm-up, then the measured one), each answered with 'done'.
  process.on('message', async (m: any) => {
    const { rate, seconds, hostID, sessions } = m as { rate: number; seconds: number; hostID: string; sessions: string[] };
    const total = Math.round(rate * seconds);
    const t0 = performance.now();
    let started = 0, done = 0, failed = 0, behind = 0, skipped = 0;
    const busy = new Set<string>();
    const inflight = new Set<Promise<void>>();
    let batch: [string, number][] = [];
    const flush = setInterval(() => { if (batch.length) { process.send!({ type: 'commits', list: batch }); batch = []; } }, 50);
    await new Promise<void>((resolve) => {
      const tick = () => {
        const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate) + 1);
        while (started < due) {
          let session: string | undefined = sessions[started % sessions.length];
          if (busy.has(session)) { behind++; session = sessions.find((x) => !busy.has(x)); }
          started++;
          if (!session) { skipped++; continue; }
          const sess = session;
          busy.add(sess);
          const p = (async () => {
            try {
              const e = await beginExecution(sql, SYSTEM, { sessionID: sess, hostID, trigger: 'PROMPT' });
              await settleExecution(sql, SYSTEM, { executionID: e.id, status: 'SUCCEEDED' });
              batch.push([e.id, now()]);
              done++;
            } catch (err) {
              failed++;
              if (failed < 5) console.error('settle failed:', (err as Error).message);
            } finally {
              busy.delete(sess);
            }
          })();
          inflight.add(p);
          void p.finally(() => inflight.delete(p));
        }
        if (started >= total) { void Promise.all(inflight).then(() => resolve()); return; }
        setTimeout(tick, 2);
      };
      tick();
    });
    clearInterval(flush);
    if (batch.length) process.send!({ type: 'commits', list: batch });
    process.send!({ type: 'done', done, failed, skipped, behind, produceMs: performance.now() - t0 });
  });
  process.send!({ type: 'ready' });
}

type Produced = { done: number; failed: number; skipped: number; behind: number; produceMs: number };

/** The producer child, started once per run: `go` runs one phase (the warm-up, then the measured one). */
async function startProducer(dbUrl: string, onCommits: (list: [string, number][]) => void) {
  const proc = fork(fileURLToPath(import.meta.url), ['--producer'], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_DB_URL: dbUrl },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let phase: { resolve: (p: Produced) => void; reject: (e: Error) => void } | null = null;
  let closing = false;
  proc.on('message', (m: any) => {
    if (m.type === 'commits') onCommits(m.list);
    else if (m.type === 'done') { phase?.resolve(m); phase = null; }
  });
  await new Promise<void>((resolve, reject) => {
    proc.once('exit', (code) => { if (!closing) { const e = new Error(`producer exited with ${code}`); reject(e); phase?.reject(e); } });
    const on = (m: any) => { if (m.type === 'ready') { proc.off('message', on); resolve(); } };
    proc.on('message', on);
  });
  return {
    go: (go: { rate: number; seconds: number; hostID: string; sessions: string[] }) =>
      new Promise<Produced>((resolve, reject) => { phase = { resolve, reject }; proc.send(go); }),
    close: () => { closing = true; proc.disconnect(); },
  };
}

type TraceRow = { pos: number; exec: string; staged?: number; passStart?: number; passEnd?: number; head?: number; readStart: number; readEnd: number; dispatch?: number; first?: number; last?: number; sends: number };
interface Stats { trace?: TraceRow[] | null; passes?: string | null; cpuMs: number; wallMs: number; rss: number; peakRss: number; heapUsed: number; subscribers: number; feedReads: number; executed: number; reused: number }

function startChild(dbUrl: string, baselineTag: string | null = null, instance = 0): Promise<{ proc: ChildProcess; port: number; request<T>(m: string, type: string): Promise<T> }> {
  const proc = fork(fileURLToPath(import.meta.url), [baselineTag === null ? '--child' : '--baseline'], {
    // BENCH_CPU_PROF=dir: each gateway writes a V8 CPU profile there (node --cpu-prof).
    execArgv: ['--import', 'tsx', ...(process.env.BENCH_CPU_PROF && baselineTag === null ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      // BENCH_GATEWAY_FLAGS_1: other node flags for the second instance (an A/B of node settings under the same load).
      ...(baselineTag === null ? (((instance === 1 ? process.env.BENCH_GATEWAY_FLAGS_1 : undefined) ?? process.env.BENCH_GATEWAY_FLAGS ?? '').split(/\s+/).filter(Boolean)) : [])],
    // NODE_ENV as `npm start` sets it (graphql-js skips its development checks in production).
    env: { ...process.env, NODE_ENV: process.env.NODE_ENV ?? 'production', BENCH_DB_URL: dbUrl, BENCH_BASELINE_TAG: baselineTag ?? '' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const request = <T>(m: string, type: string) => new Promise<T>((resolve) => {
    const on = (msg: any) => { if (msg?.type === type) { proc.off('message', on); resolve(msg); } };
    proc.on('message', on);
    proc.send(m);
  });
  return new Promise((resolve, reject) => {
    proc.once('error', reject);
    proc.once('exit', (code) => reject(new Error(`gateway child exited with ${code}`)));
    const on = (msg: any) => { if (msg?.type === 'ready') { proc.off('message', on); resolve({ proc, port: msg.port, request }); } };
    proc.on('message', on);
  });
}

/** Close codes of the sockets that reconnected (1006: terminated, e.g. a keep-alive ping unanswered; 4xxx: the gateway's). */
const closeCodes = new Map<number, number>();

/** A minimal graphql-transport-ws subscriber: one socket, one subscription, cheap parsing. */
class Subscriber {
  ws!: WebSocket;
  last = 0;
  received = new Set<number>();
  dups = 0;
  outOfOrder = 0;
  errors: string[] = [];
  closed = false;

  reconnects = 0;
  stopping = false;

  constructor(private url: string, private token: string, private after: string, private onEvent: (pos: number, execID: string, at: number) => void) {}

  /** The cursor to resume from: the last event received, or the run's start. */
  private resumeCursor(): string {
    return this.last ? encodeCursor('settlement', this.last) : this.after;
  }

  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const ws = (this.ws = new WebSocket(this.url, 'graphql-transport-ws'));
      ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${this.token}` } })));
      ws.on('error', (e) => { this.errors.push(String(e)); reject(e); });
      ws.on('close', (code) => {
        // What a real client does: reconnect and resume from its last cursor.
        if (this.stopping) { this.closed = true; return; }
        closeCodes.set(code, (closeCodes.get(code) ?? 0) + 1);
        this.reconnects++;
        setTimeout(() => void this.open().catch(() => { this.closed = true; }), 100);
      });
      ws.on('message', (data) => {
        const at = now();
        const s = data.toString();
        if (s.startsWith('{"id"') || s.includes('"type":"next"')) {
          // {"id":"1","type":"next","payload":{"data":{"executionSettled":{"cursor":"...","executionID":"..."}}}}
          const ci = s.indexOf('"cursor":"');
          if (ci < 0) { this.errors.push(s.slice(0, 300)); return; }
          const cEnd = s.indexOf('"', ci + 10);
          const cursor = s.slice(ci + 10, cEnd);
          const ei = s.indexOf('"executionID":"');
          const exec = s.slice(ei + 15, s.indexOf('"', ei + 15));
          const pos = decodeCursor('settlement', cursor)!;
          if (this.received.has(pos)) this.dups++;
          else this.received.add(pos);
          if (pos <= this.last) this.outOfOrder++;
          this.last = Math.max(this.last, pos);
          this.onEvent(pos, exec, at);
          return;
        }
        const m = JSON.parse(s);
        if (m.type === 'connection_ack') {
          ws.send(JSON.stringify({
            id: '1', type: 'subscribe',
            payload: { query: 'subscription($a: String) { executionSettled(after: $a) { cursor executionID } }', variables: { a: this.resumeCursor() } },
          }));
          resolve();
        } else if (m.type === 'ping') ws.send('{"type":"pong"}');
        else if (m.type === 'error' || m.type === 'complete') this.errors.push(s.slice(0, 300));
      });
    });
  }
}

function pct(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function run(dbUrl: string, sql: Sql, opts: { subs: number; rate: number; seconds: number; warmup: number; admin: string; hostID: string; sessions: string[]; baseline?: boolean }) {
  const gws = await Promise.all(opts.baseline ? [startChild(dbUrl, '0'), startChild(dbUrl, '1')] : [startChild(dbUrl, null, 0), startChild(dbUrl, null, 1)]);
  const head = Number((await sql`SELECT coalesce(max(pos), 0) AS h FROM settlements`)[0].h);
  const after = encodeCursor('settlement', head);
  const commitAt = new Map<string, number>(); // execution ID -> commit time (epoch ms)
  // The warm-up's settlements: delivered and checked (lost, duplicates, order) like the others, but
  // their latencies are kept apart and no rate or CPU figure counts them.
  const warm = new Set<string>();
  let warming = false;
  const latencies: number[] = [];
  const warmLatencies: number[] = [];
  const pendingByExec = new Map<string, number[]>(); // deliveries that arrived before the producer reported the commit
  let firstCommit = Infinity;
  let lastDelivery = 0;
  const byInstance: number[][] = [[], []];
  const pendingByExec1 = new Map<string, number[]>();
  const record = (exec: string, latency: number, instance: number) => {
    if (warm.has(exec)) { warmLatencies.push(latency); return; }
    latencies.push(latency);
    byInstance[instance].push(latency);
  };
  const onEvent = (_pos: number, exec: string, at: number, instance = 0) => {
    const c = commitAt.get(exec);
    if (c !== undefined) { if (!warm.has(exec)) lastDelivery = Math.max(lastDelivery, at); record(exec, Math.max(0, at - c), instance); }
    else {
      if (!warming) lastDelivery = Math.max(lastDelivery, at);
      const pending = instance === 1 ? pendingByExec1 : pendingByExec;
      let l = pending.get(exec); if (!l) pending.set(exec, (l = [])); l.push(at);
    }
  };
  // Open the subscribers in batches.
  const subs: Subscriber[] = [];
  const tOpen = performance.now();
  let openFailures = 0;
  for (let i = 0; i < opts.subs; i += 100) {
    const batch: Promise<void>[] = [];
    for (let j = i; j < Math.min(opts.subs, i + 100); j++) {
      const g = gws[j % 2];
      const s = new Subscriber(`ws://127.0.0.1:${g.port}/graphql`, opts.admin, after, (p, e, at) => onEvent(p, e, at, j % 2));
      subs.push(s);
      batch.push(s.open().catch(() => { openFailures++; }));
    }
    await Promise.all(batch);
  }
  const openMs = performance.now() - tOpen;
  // Let the subscriptions register on the feeds.
  for (let i = 0; i < 100; i++) {
    const st = await Promise.all(gws.map((g) => g.request<Stats>('stats', 'stats')));
    if (st.reduce((a, s) => a + s.subscribers, 0) >= opts.subs - openFailures) break;
    await new Promise((r) => setTimeout(r, 100));
  }

  // Producer (its own child process, so the subscribers' work cannot slow it down).
  const onCommits = (list: [string, number][]) => {
    for (const [exec, at] of list) {
      commitAt.set(exec, at);
      if (warming) warm.add(exec);
      else firstCommit = Math.min(firstCommit, at);
      const early = pendingByExec.get(exec);
      if (early) { for (const t of early) record(exec, Math.max(0, t - at), 0); pendingByExec.delete(exec); }
      const early1 = pendingByExec1.get(exec);
      if (early1) { for (const t of early1) record(exec, Math.max(0, t - at), 1); pendingByExec1.delete(exec); }
    }
  };
  const producer = opts.baseline ? null : await startProducer(dbUrl, onCommits);
  // BASELINE_LOAD=1: the same writes as the gateway run's, beside the baseline's broadcasts (their commits are not its events).
  const writeLoad = opts.baseline && BASELINE_LOAD ? await startProducer(dbUrl, () => {}) : null;
  let sentBefore = 0; // the baseline's events of earlier phases
  const produce = async (seconds: number): Promise<Produced> => {
    if (producer) return producer.go({ rate: opts.rate, seconds, hostID: opts.hostID, sessions: opts.sessions });
    const from = sentBefore;
    const load = writeLoad?.go({ rate: opts.rate, seconds, hostID: opts.hostID, sessions: opts.sessions });
    const r = (await Promise.all(gws.map((g) => new Promise<Produced>((resolve) => {
      const on = (m: any) => { if (m?.type === 'commits') onCommits(m.list); else if (m?.type === 'done') { g.proc.off('message', on); resolve(m); } };
      g.proc.on('message', on);
      g.proc.send({ type: 'go', rate: opts.rate, seconds, head, from });
    }))))[0];
    await load;
    sentBefore += r.done;
    return r;
  };
  const { sequenceSettlements } = await import('../domain/settlements.js');
  // Every settlement of the run so far, in log order (the gateway's from the log, the baseline's by count).
  const positions = async (n: number) => {
    if (opts.baseline) return Array.from({ length: n }, (_, i) => head + 1 + i);
    while ((await sequenceSettlements(sql, { wait: true })).more);
    return (await sql`SELECT pos FROM settlements WHERE pos > ${head} ORDER BY pos`).map((r) => Number(r.pos));
  };
  /** Waits (bounded) until every subscriber has every event so far. */
  const drain = async (expected: number) => {
    const t = performance.now();
    while (performance.now() - t < 20_000) {
      if (subs.every((s) => s.received.size >= expected || s.closed)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return performance.now() - t;
  };

  // Warm-up: the same rate for `warmup` seconds, delivered in full before measuring starts. A freshly
  // started server runs its code cold (V8 interprets it until it has compiled it, several times slower
  // for the first few hundred milliseconds) and would otherwise spend the run's first events on it;
  // the figures below are of a server that has run, as a deployed one has. The warm-up's own latency
  // is printed on its own line.
  let warmupProduced: Produced | null = null;
  let warmupDrainMs = 0;
  let warmed = 0; // the warm-up's settlements in the log
  if (opts.warmup > 0) {
    warming = true;
    warmupProduced = await produce(opts.warmup);
    warmed = (await positions(warmupProduced.done)).length;
    warmupDrainMs = await drain(warmed);
    warming = false;
  }
  if (process.env.BENCH_TRACE === '1') await Promise.all(gws.map((g) => g.request<Stats>('stats', 'stats'))); // the trace starts afresh
  await Promise.all(gws.map((g) => g.request('mark', 'marked')));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const prod = await produce(opts.seconds);
  producer?.close();
  if (writeLoad) {
    writeLoad.close();
    // Its settlements positioned, so the next run's log starts after them.
    while ((await sequenceSettlements(sql, { wait: true })).more);
  }
  const { done, failed, skipped, behind } = prod;
  // Drain: wait until every subscriber has every event (bounded).
  const expectedPos = await positions(done + (warmupProduced?.done ?? 0));
  const expected = expectedPos.length;
  const drainMs = await drain(expected);
  const gstats = await Promise.all(gws.map((g) => g.request<Stats>('stats', 'stats')));
  const bc = process.cpuUsage(cpu0);
  const wall = performance.now() - t0;
  // lost = a hole: an event below the last one a subscriber received that it never got.
  // undelivered = events after its last one still on their way when the drain window closed.
  let lost = 0, undelivered = 0, dups = 0, ooo = 0, closed = 0, errors = 0, reconnects = 0;
  for (const s of subs) {
    reconnects += s.reconnects;
    for (const p of expectedPos) {
      if (p > s.last) { undelivered++; continue; }
      if (!s.received.has(p)) lost++;
    }
    dups += s.dups;
    ooo += s.outOfOrder;
    if (s.closed) closed++;
    errors += s.errors.length;
  }
  const lat = Float64Array.from(latencies).sort();
  // BENCH_TRACE: each stage's time after the commit, p50 / p99 over settlements and instances.
  const stages: Record<string, string> = {};
  if (gstats.some((s) => s.trace)) {
    const keys = ['staged', 'passStart', 'passEnd', 'head', 'readStart', 'readEnd', 'dispatch', 'first', 'last'] as const;
    const by: Record<string, number[]> = Object.fromEntries(keys.map((k) => [k, []]));
    for (const s of gstats) for (const r of s.trace ?? []) {
      const c = commitAt.get(r.exec);
      if (c === undefined || warm.has(r.exec)) continue;
      for (const k of keys) if (r[k] !== undefined) by[k].push(r[k]! - c);
    }
    if (process.env.BENCH_TRACE_OUT) {
      // Every traced settlement with its commit time, for a look at where the slowest ones spent theirs.
      const { appendFileSync } = await import('node:fs');
      const all = gstats.flatMap((s, i) => (s.trace ?? []).map((r) => ({ instance: i, commit: commitAt.get(r.exec), ...r })));
      appendFileSync(process.env.BENCH_TRACE_OUT, JSON.stringify({ subs: opts.subs, rate: opts.rate, rows: all }) + '\n');
    }
    for (const k of keys) {
      const a = Float64Array.from(by[k]).sort();
      stages[k] = `${pct(a, 50).toFixed(1)} / ${pct(a, 99).toFixed(1)}`;
    }
  }
  const codes = [...closeCodes].map(([c, k]) => `${c}:${k}`).join(' ');
  closeCodes.clear();
  for (const s of subs) { s.stopping = true; s.ws.terminate(); }
  await Promise.all(gws.map((g) => new Promise<void>((r) => { g.proc.once('exit', () => r()); g.proc.send('stop'); setTimeout(() => { g.proc.kill(); r(); }, 5000).unref(); })));
  return {
    who: opts.baseline ? (BASELINE_LOAD ? 'baseline (ws + writes)' : 'baseline (bare ws)') : 'gateway',
    deliveriesPerSec: latencies.length / Math.max(0.001, (lastDelivery - firstCommit) / 1000),
    subs: opts.subs,
    rate: opts.rate,
    seconds: opts.seconds,
    settled: done,
    failed,
    achievedRate: done / (prod.produceMs / 1000),
    expectedDeliveries: (expected - warmed) * opts.subs,
    delivered: latencies.length,
    warmup: opts.warmup,
    warmupSettled: warmupProduced?.done ?? 0,
    warmupDelivered: warmLatencies.length,
    warmupLatency: (() => { const w = Float64Array.from(warmLatencies).sort(); return { p50: pct(w, 50), p99: pct(w, 99), max: w.length ? w[w.length - 1] : NaN }; })(),
    warmupDrainMs,
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    byInstance: byInstance.map((a) => { const x = Float64Array.from(a).sort(); return `${pct(x, 50).toFixed(1)} / ${pct(x, 99).toFixed(1)}`; }),
    max: lat.length ? lat[lat.length - 1] : NaN,
    closeCodes: codes,
    lost, undelivered, dups, ooo, closed, errors, reconnects, skipped, openFailures, openMs, drainMs,
    gatewayCpu: gstats.map((s) => s.cpuMs / s.wallMs), // cores
    gatewayCpuMs: gstats.reduce((a, s) => a + s.cpuMs, 0),
    gatewayRssMB: gstats.map((s) => s.peakRss / 2 ** 20),
    gatewayHeapMB: gstats.map((s) => s.heapUsed / 2 ** 20),
    feedReads: gstats.map((s) => s.feedReads),
    executions: gstats.map((s) => `${s.executed}/${s.executed + s.reused}`),
    benchCpu: (bc.user + bc.system) / 1000 / wall,
    behind,
    stages,
    passes: gstats.map((s) => s.passes ?? '-'),
  };
}

async function main() {
  // The gateway children run dist/ as `npm start` does (bench/support/gateway-code.ts).
  ensureBuilt();
  const subsList = (process.env.SUBS ?? '1000,5000').split(',').map(Number);
  // RATES=25,50,100,200: each subscriber count at each rate, gateway then baseline (RATE: one rate).
  const rates = (process.env.RATES ?? process.env.RATE ?? '200').split(',').map(Number);
  const seconds = Number(process.env.SECONDS ?? 30);
  const warmup = Number(process.env.WARMUP ?? 3);
  const server = await openDatabase();
  const scratch = await createScratchDatabase(server.url, 'gw_bench_subs');
  const dbUrl = scratch.url;
  if (process.env.CLOCK_WAIT_MS !== undefined) {
    // How long a settling commit waits for a busy settlement clock (migration 057), for every
    // connection to the scratch database, the producer's included: set before any of them opens.
    const admin = connect(server.url, { max: 1, applicationName: 'bench-setup' });
    const ms = Number(process.env.CLOCK_WAIT_MS);
    if (!Number.isSafeInteger(ms) || ms < 0) throw new Error('CLOCK_WAIT_MS must be a whole number of milliseconds');
    await admin.unsafe(`ALTER DATABASE "${new URL(dbUrl).pathname.slice(1)}" SET gateway.settlement_clock_wait_ms = ${ms}`);
    await admin.end();
  }
  const sql = connect(dbUrl, { max: 20, applicationName: 'bench-producer' });
  const results: Awaited<ReturnType<typeof run>>[] = [];
  try {
    await migrate(sql);
    const { createToken } = await import('../domain/tokens.js');
    const { registerHost } = await import('../domain/hosts.js');
    const { createSession } = await import('../domain/sessions.js');
    const { SYSTEM } = await import('../domain/access.js');
    const admin = (await createToken(sql, { role: 'admin', label: 'bench' })).secret;
    const host = await registerHost(sql, SYSTEM, { name: 'bench-host', leaseMs: 600_000 });
    const sessions: string[] = [];
    for (let i = 0; i < 1000; i++) sessions.push((await createSession(sql, SYSTEM, { title: `s${i}`, directory: `/bench/d${i % 10}` })).id);
    for (const n of subsList) for (const rate of rates) {
      console.error(`run: ${n} subscribers, ${rate}/s for ${seconds}s ...`);
      const r = await run(dbUrl, sql, { subs: n, rate, seconds, warmup, admin, hostID: host.id, sessions });
      results.push(r);
      console.error(JSON.stringify(r));
      console.error(`baseline: ${n} subscribers, ${rate}/s for ${seconds}s ...`);
      const b = await run(dbUrl, sql, { subs: n, rate, seconds, warmup, admin, hostID: host.id, sessions, baseline: true });
      results.push(b);
      console.error(JSON.stringify(b));
    }
  } finally {
    await sql.end({ timeout: 1 });
    await scratch.drop();
    await server.stop();
  }
  const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-');
  const rows: [string, (r: (typeof results)[number]) => string][] = [
    ['server', (r) => r.who],
    ['subscribers (2 instances)', (r) => String(r.subs)],
    ['deliveries per second', (r) => f(r.deliveriesPerSec, 0)],
    ['server CPU per delivered message µs', (r) => f((r.gatewayCpuMs * 1000) / Math.max(1, r.delivered), 1)],
    ['target rate, duration (after a warm-up of)', (r) => `${r.rate}/s, ${r.seconds}s (${r.warmup}s)`],
    ['settlements committed (achieved/s)', (r) => `${r.settled} (${f(r.achievedRate)})`],
    ['deliveries expected / measured', (r) => `${r.expectedDeliveries} / ${r.delivered}`],
    ['latency commit->client p50 ms', (r) => f(r.p50)],
    ['latency p99 ms', (r) => f(r.p99)],
    ['latency max ms', (r) => f(r.max)],
    ['latency p50/p99 ms per instance', (r) => r.byInstance.join(' + ')],
    ['warm-up: settled, deliveries', (r) => `${r.warmupSettled}, ${r.warmupDelivered}`],
    ['warm-up latency p50 / p99 / max ms', (r) => `${f(r.warmupLatency.p50)} / ${f(r.warmupLatency.p99)} / ${f(r.warmupLatency.max, 0)}`],
    ['lost (holes below last received)', (r) => String(r.lost)],
    ['still in flight when the 20 s drain ended', (r) => String(r.undelivered)],
    ['duplicates', (r) => String(r.dups)],
    ['out of order', (r) => String(r.ooo)],
    ['sockets given up / errors', (r) => `${r.closed} / ${r.errors}`],
    ['client reconnects (resumed by cursor)', (r) => String(r.reconnects)],
    ['reconnects by close code', (r) => r.closeCodes || '-'],
    ['producer ticks skipped (all sessions busy)', (r) => String(r.skipped)],
    ['gateway CPU (cores, per instance)', (r) => r.gatewayCpu.map((x) => f(x, 2)).join(' + ')],
    ['gateway peak RSS MB (per instance)', (r) => r.gatewayRssMB.map((x) => f(x, 0)).join(' + ')],
    ['gateway heap used MB at end', (r) => r.gatewayHeapMB.map((x) => f(x, 0)).join(' + ')],
    ['log reads per instance (shared feed)', (r) => r.feedReads.join(' + ')],
    ['event executions / deliveries', (r) => r.executions.join(' + ')],
    ['bench process CPU (clients+producer)', (r) => f(r.benchCpu, 2)],
    ...(['staged', 'passStart', 'passEnd', 'head', 'readStart', 'readEnd', 'dispatch', 'first', 'last'] as const).map((k) =>
      [`trace: ${k} after commit p50/p99 ms`, (r: (typeof results)[number]) => r.stages[k] ?? '-'] as [string, (r: (typeof results)[number]) => string]),
    ['trace: sequencer passes (p50/max ms), per instance', (r) => r.passes.join(' | ')],
    ['drain after last commit ms', (r) => f(r.drainMs, 0)],
    ['time to open all sockets ms', (r) => f(r.openMs, 0)],
  ];
  // Kept up: the target rate was produced (the baseline's sender is its own producer: when its sends
  // fall behind, its rate drops instead), deliveries went out at 90% of the rate they were asked for
  // (a server that falls behind and catches up in the drain did not keep up) and everything arrived.
  const keptUp = (r: (typeof results)[number]) => r.undelivered === 0 && r.lost === 0 && r.achievedRate >= 0.95 * r.rate &&
    r.deliveriesPerSec >= 0.9 * r.rate * r.subs;
  const w0 = Math.max(...rows.map((r) => r[0].length));
  console.log(`\nSettlement subscriptions: gateways as 2 child processes, ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'} Postgres, ${(await import('node:os')).cpus().length} cores shared with Postgres and the clients\n`);
  for (const [label, fn] of rows) console.log(label.padEnd(w0) + '  ' + results.map((r) => fn(r).padStart(20)).join(''));
  console.log(`\nload average (1/5/15 min) at the end: ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  for (let i = 0; i + 1 < results.length; i += 2) {
    const g = results[i], b = results[i + 1];
    console.log(`${g.subs} subscribers at ${g.rate}/s: gateway/baseline deliveries per second ${f(g.deliveriesPerSec / b.deliveriesPerSec, 2)} (target >= 0.7), ` +
      `p99 ${f(g.p99 / b.p99, 2)}x (baseline p99 ${f(b.p99)} ms; target <= 2x where the baseline's p99 < 20 ms), ` +
      `gateway CPU per delivery ${f((g.gatewayCpuMs * 1000) / Math.max(1, g.delivered), 1)} µs vs ${f((b.gatewayCpuMs * 1000) / Math.max(1, b.delivered), 1)} µs, ` +
      `kept up: gateway ${keptUp(g) ? 'yes' : 'no'}, baseline ${keptUp(b) ? 'yes' : 'no'}`);
  }
  for (const n of subsList) {
    const pairs = [];
    for (let i = 0; i + 1 < results.length; i += 2) if (results[i].subs === n && results[i + 1].p99 < 20) pairs.push([results[i], results[i + 1]] as const);
    const top = pairs.sort((a, b) => b[0].rate - a[0].rate)[0];
    console.log(top
      ? `${n} subscribers: highest rate run where the baseline's p99 < 20 ms: ${top[0].rate}/s; gateway p99 ${f(top[0].p99)} ms / baseline ${f(top[1].p99)} ms = ${f(top[0].p99 / top[1].p99, 2)}x (target <= 2)`
      : `${n} subscribers: no rate run here had a baseline p99 under 20 ms (machine load: see above); try lower RATES`);
  }
}

if (CHILD) await child();
else if (process.argv.includes('--baseline')) await baselineChild();
else if (process.argv.includes('--producer')) await producer();
else await main();
