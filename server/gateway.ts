import { detectDistribution } from '../db/cluster.js';
import { isDatabaseUnavailable, whenAvailable, type Sql } from '../db/connection.js';
import { readJournal, type JournalEvent } from '../domain/journal.js';
import { LEASE_MAX_MS, sweepExpiredLeases } from '../domain/hosts.js';
import type { SettlementRow } from '../domain/settlements.js';
import { PgBus } from '../subscriptions/bus.js';
import { Feed } from '../subscriptions/feed.js';
import { Revocations } from '../subscriptions/signal.js';
import { Sequencer } from '../subscriptions/sequencer.js';
import { SYSTEM } from '../domain/access.js';
import { noticedSettlements, readSettlements } from '../domain/settlements.js';
import { pruneChangesets } from '../domain/changesets.js';
import { pruneHostRequests } from '../domain/host-requests.js';
import type { Logger } from './logging.js';

export interface GatewayConfig {
  /** How often this instance looks for hosts whose lease lapsed. */
  sweepIntervalMs: number;
  /**
   * After this instance's first sweep (every lapsed host), its sweeps look only at hosts whose lease
   * lapsed within this many ms (0: every lapsed host, every time). Default 120000.
   */
  sweepWindowMs?: number;
  /**
   * The sequencer's safety pass (ms; 0 = off): staged notices and the listening connection's return
   * wake it; this pass only covers what those could miss. Default 60000.
   */
  sequencerSafetyMs?: number;
  /** How often this instance applies the changeset retention policy (ms; 0 = off). Default 600000. */
  retentionIntervalMs?: number;
  /** Safety poll of the feeds while they have subscribers (ms; 0 = off). Default 5000. */
  feedPollMs?: number;
  /** Upper bound of sealSession's timeoutMs (ms). Default 120000. */
  sealMaxTimeoutMs?: number;
  /** Upper bound of compactSession's and generate's timeoutMs (ms). Default 120000. */
  hostRequestMaxTimeoutMs?: number;
  /** How long a closed compactSession / generate request keeps its prompt and reply (ms). Default 24 h. */
  hostRequestRetentionMs?: number;
}

/** The services one gateway instance keeps besides its connections: the bus, its feeds, the lease sweeper. */
export class Gateway {
  /** The instance's logger, handed to the services below. */
  readonly log: Logger;
  readonly bus: PgBus;
  readonly settlements: Feed<SettlementRow>;
  /** Ends subscriptions and WebSocket connections of revoked tokens. */
  readonly revocations: Revocations;
  /** Gives staged settlements their positions in the global log. */
  readonly sequencer: Sequencer;
  private journals = new Map<string, Feed<JournalEvent>>();
  private sweeper: NodeJS.Timeout | null = null;
  private sweeping = false;
  /** This instance has swept every lapsed host once (at its start); later sweeps look at recent lapses. */
  private sweptAll = false;
  /** Aborted when the instance stops: waits such as a seal's end early (their state is persisted). */
  readonly stopping = new AbortController();
  /** Told of every sealSession's outcome (SessionSealed or the error's type) and duration (metrics). */
  onSeal: ((outcome: string, seconds: number) => void) | null = null;

  /** Runs a seal, reporting its outcome and duration to `onSeal` and to the log. */
  async timedSeal<T>(run: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    const report = (outcome: string) => {
      const seconds = (performance.now() - t0) / 1000;
      this.onSeal?.(outcome, seconds);
      this.log.info({ outcome, durationMs: Math.round(seconds * 1000) }, 'seal');
    };
    try {
      const r = await run();
      report('SessionSealed');
      return r;
    } catch (e) {
      report(e instanceof Error ? e.constructor.name : 'unknown');
      throw e;
    }
  }

  constructor(readonly sql: Sql, readonly config: GatewayConfig, logger: Logger) {
    this.log = logger;
    this.bus = new PgBus(sql, this.log);
    this.revocations = new Revocations(sql, this.bus, this.log);
    // What this instance positions, its settlement feed hands out at once (not after the head notice, not read again).
    this.sequencer = new Sequencer(sql, this.bus, this.log, config.sequencerSafetyMs ?? 60_000, (rows, after) => this.settlements.offer(rows, after));
    this.settlements = new Feed<SettlementRow>(
      this.bus,
      this.log,
      'settlements',
      (after, limit) => readSettlements(sql, SYSTEM, { after, limit }),
      (r) => r.pos,
      async () => Number((await sql`SELECT coalesce(max(pos), 0) AS head FROM settlements`)[0].head),
      // The head notice says up to where the log is visible (one read per new head, not per notice),
      // and carries the rows of the pass when they fit (handed out without a read).
      {
        pollMs: config.feedPollMs,
        noticeCursor: (n) => (n.k === 's' ? n.p : undefined),
        noticeRows: (n) => (n.k === 's' ? noticedSettlements(n) : undefined),
      },
    );
  }

  /** The shared reader of one session's journal (created on first use, dropped with its last subscriber). */
  journal(sessionID: string): Feed<JournalEvent> {
    let f = this.journals.get(sessionID);
    if (!f) {
      f = new Feed<JournalEvent>(
        this.bus,
        this.log,
        `journal:${sessionID}`,
        (after, limit) => readJournal(this.sql, sessionID, after, limit),
        (e) => e.seq,
        async () => Number((await this.sql`SELECT coalesce(max(seq), 0) AS head FROM journal WHERE session_id = ${sessionID}`)[0].head),
        { pollMs: this.config.feedPollMs, onIdle: () => { if (this.journals.get(sessionID) === f) this.journals.delete(sessionID); } },
      );
      this.journals.set(sessionID, f);
    }
    return f;
  }

  async start(): Promise<void> {
    // Whether the tables are distributed (db/cluster.ts). With the database away at start, it is
    // found out as soon as it answers (until then the one-Postgres forms are used).
    await detectDistribution(this.sql).catch(() => {
      void whenAvailable(() => detectDistribution(this.sql), () => this.stopping.signal.aborted).catch(() => {});
    });
    await this.bus.start();
    this.sequencer.start();
    this.bus.on('renewals', (n) => {
      if (n.k !== 'h') return;
      const now = Date.now();
      this.renewalAttempts.set(n.h, now);
      // Forget attempts older than the longest lease: they extend nothing any more.
      for (const [h, at] of this.renewalAttempts) if (now - at > LEASE_MAX_MS) this.renewalAttempts.delete(h);
    });
    if (this.config.sweepIntervalMs > 0) {
      this.sweeper = setInterval(() => void this.sweep(), this.config.sweepIntervalMs);
      this.sweeper.unref();
    }
    const retentionMs = this.config.retentionIntervalMs ?? 600_000;
    if (retentionMs > 0) {
      // Any instance may prune: concurrent runs on other instances skip (see pruneChangesets).
      this.retention = setInterval(() => {
        pruneChangesets(this.sql).then(
          (r) => { if (r.changesets || r.snapshots || r.contents) this.log.info({ ...r }, 'retention: changesets pruned'); },
          (err) => this.log.warn({ err }, 'retention: changesets not pruned (retried at the next tick)'),
        );
        pruneHostRequests(this.sql, this.config.hostRequestRetentionMs).then(
          (n) => { if (n) this.log.info({ requests: n }, 'retention: closed host requests deleted'); },
          (err) => this.log.warn({ err }, 'retention: host requests not pruned (retried at the next tick)'),
        );
      }, retentionMs);
      this.retention.unref();
    }
  }
  private retention: NodeJS.Timeout | null = null;

  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const windowMs = this.config.sweepWindowMs ?? 120_000;
      if (this.sweepFoundUnavailable) {
        // The database works again: leases that lapsed while it could not take renewals run from now.
        this.databaseBack = { at: (await this.sql<{ at: string }[]>`SELECT now()::text AS at`)[0].at, since: Date.now() };
        this.sweepFoundUnavailable = false;
        this.log.info({ at: this.databaseBack.at }, 'lease sweep: the database works again; lapsed leases count from now');
      }
      // Past the longest lease (and the sweep's window), the return changes no host's lapse any more.
      if (this.databaseBack && Date.now() - this.databaseBack.since > LEASE_MAX_MS + windowMs) this.databaseBack = null;
      const r = await sweepExpiredLeases(this.sql, {
        windowMs: this.sweptAll && windowMs > 0 ? windowMs : null, databaseBackAt: this.databaseBack?.at ?? null,
        renewalAttempts: this.renewalAttempts,
      });
      this.sweptAll = true;
      if (r.abandoned || r.lost) this.log.info({ ...r }, 'lease sweep: executions abandoned, jobs lost');
    } catch (err) {
      // The hosts could not renew either: no host is declared dead for a lapse the database caused.
      if (isDatabaseUnavailable(err)) this.sweepFoundUnavailable = true;
      this.log.warn({ err }, 'lease sweep failed (retried at the next tick)');
    } finally { this.sweeping = false; }
  }
  /** When (this process's clock) each host last asked for a renewal the database could not take (notice `h`). */
  private renewalAttempts = new Map<string, number>();
  /** The last sweep failed because the database was unavailable (hosts could not renew meanwhile). */
  private sweepFoundUnavailable = false;
  /** When (the database's time, and this process's) a sweep found the database working again after that. */
  private databaseBack: { at: string; since: number } | null = null;

  async stop(): Promise<void> {
    this.stopping.abort();
    this.sequencer.stop();
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.retention) clearInterval(this.retention);
    await this.bus.stop();
  }
}
