import type { Sql } from '../db/connection.js';
import { readJournal, type JournalEvent } from '../domain/journal.js';
import { sweepExpiredLeases } from '../domain/hosts.js';
import type { SettlementRow } from '../domain/settlements.js';
import { PgBus } from '../subscriptions/bus.js';
import { Feed } from '../subscriptions/feed.js';
import { SYSTEM } from '../domain/access.js';
import { readSettlements } from '../domain/settlements.js';

export interface GatewayConfig {
  /** How often this instance looks for hosts whose lease lapsed. */
  sweepIntervalMs: number;
}

/** The services one gateway instance keeps besides its connections: the bus, its feeds, the lease sweeper. */
export class Gateway {
  readonly bus: PgBus;
  readonly settlements: Feed<SettlementRow>;
  private journals = new Map<string, Feed<JournalEvent>>();
  private sweeper: NodeJS.Timeout | null = null;
  private sweeping = false;

  constructor(readonly sql: Sql, readonly config: GatewayConfig) {
    this.bus = new PgBus(sql);
    this.settlements = new Feed<SettlementRow>(
      this.bus,
      'settlements',
      (after, limit) => readSettlements(sql, SYSTEM, { after, limit }),
      (r) => r.pos,
      async () => Number((await sql`SELECT coalesce(max(pos), 0) AS head FROM settlements`)[0].head),
    );
  }

  /** The shared reader of one session's journal (created on first use, dropped with its last subscriber). */
  journal(sessionID: string): Feed<JournalEvent> {
    let f = this.journals.get(sessionID);
    if (!f) {
      f = new Feed<JournalEvent>(
        this.bus,
        `journal:${sessionID}`,
        (after, limit) => readJournal(this.sql, sessionID, after, limit),
        (e) => e.seq,
        async () => Number((await this.sql`SELECT coalesce(max(seq), 0) AS head FROM journal WHERE session_id = ${sessionID}`)[0].head),
        () => this.journals.delete(sessionID),
      );
      this.journals.set(sessionID, f);
    }
    return f;
  }

  async start(): Promise<void> {
    await this.bus.start();
    if (this.config.sweepIntervalMs > 0) {
      this.sweeper = setInterval(() => void this.sweep(), this.config.sweepIntervalMs);
      this.sweeper.unref();
    }
  }

  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try { await sweepExpiredLeases(this.sql); } catch { /* retried at the next tick */ } finally { this.sweeping = false; }
  }

  async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    await this.bus.stop();
  }
}
