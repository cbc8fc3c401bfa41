// OpenCode intake: follows OpenCode's global event stream forever (reconnecting), backfills from the
// stored per-session cursors with POST /sync/history on every (re)connect and at every poll, and
// applies each durable event exactly once, in seq order per session (a gap reads that session's history
// again). Each event is one transaction of its session's state (BridgeContext.transact): mapped by the
// pure session mapper, performed by the gateway mirror, stored with its cursor.
import type { OcLiveEvent, OcSession, OcSyncEvent } from './client.js';
import type { BridgeContext, Live } from './context.js';
import { GatewayError } from './gateway.js';
import type { GatewayToOpencode } from './gateway-to-opencode.js';
import type { HostLease } from './host-lease.js';
import { baseType } from './mapping.js';
import { FROM_HISTORY, type GatewayMirror, type Moment } from './mirror.js';
import { mapEvent, mapIdle, mapSessionInfo, messageNamed } from './session-mapper.js';

export class OpencodeIntake {
  /** Counters for tests and logs. */
  readonly stats = { applied: 0, skipped: 0, backfills: 0, connects: 0 };
  private abort = new AbortController();
  private followLoop: Promise<void> | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private pendingPoll = false;

  constructor(private readonly ctx: BridgeContext, private readonly lease: HostLease, private readonly mirror: GatewayMirror,
    private readonly reverse: GatewayToOpencode) {}

  /** Starts following; resolves once the first backfill succeeded. */
  async start() {
    const { ctx } = this;
    // Safety net besides the event stream: read new history now and then (only events after the cursors).
    this.pollTimer = setInterval(() => {
      if (this.pendingPoll || ctx.stopped) return;
      this.pendingPoll = true;
      void ctx.enqueue(async function poll(this: OpencodeIntake) {
        try {
          await this.applyAll(await ctx.oc.history(this.cursors()));
          for (const l of ctx.sessions.values()) {
            if (l.row.sessionID && !l.st.removed) await ctx.transact(l, (w) => this.mirror.retryPending(w));
          }
        } catch (e: any) {
          if (!(e instanceof GatewayError)) ctx.log(`history poll: ${e?.message ?? e}`); // OpenCode down: the stream's reconnect will backfill
          else throw e;
        } finally { this.pendingPoll = false; }
      }.bind(this)).catch(() => {});
    }, ctx.opts.pollMs ?? 15_000);
    this.pollTimer.unref();
    let firstConnect!: () => void;
    const connected = new Promise<void>((r) => (firstConnect = r));
    this.followLoop = this.follow(firstConnect);
    await connected;
  }

  async stop() {
    this.abort.abort();
    if (this.pollTimer) clearInterval(this.pollTimer);
    await this.followLoop?.catch(() => {});
  }

  /** Applies everything OpenCode has recorded so far (runs in the queue: call it through `settled`). */
  async catchUp() {
    await this.applyAll(await this.ctx.oc.history(this.cursors()));
  }

  /** Resolves when everything OpenCode has recorded so far has been applied. */
  settled(): Promise<void> {
    return this.ctx.enqueue(() => this.catchUp());
  }

  /** OpenCode reports the session idle (in the queue): flush prompts that got no answer, settle steps that will never finish. */
  async idle(ocSessionID: string) {
    const l = this.ctx.sessions.get(ocSessionID);
    if (!l || !l.row.sessionID || l.st.removed) return;
    await this.ctx.transact(l, (w) => this.mirror.perform(w, mapIdle(this.view(w))));
  }

  /** Mirrors an OpenCode session now (in the queue), e.g. the child a CREATE_SESSION command created. */
  async mirrorSession(l: Live, info: OcSession, metadata: Record<string, unknown>) {
    await this.commit(l, (w) => this.mirror.perform(w, mapSessionInfo(this.view(w), info, metadata)));
  }

  private view(w: Live) { return { ocSessionID: w.row.ocSessionID, sessionID: w.row.sessionID, st: w.st }; }

  /** A transaction of the session; a session mirrored by it is followed on the gateway from then on. */
  private async commit(l: Live, fn: (w: Live) => Promise<void>) {
    const before = l.row.sessionID;
    await this.ctx.transact(l, fn);
    if (!before && l.row.sessionID) this.reverse.watch(l);
  }

  private cursors(): Record<string, number> {
    const c: Record<string, number> = {};
    for (const [id, l] of this.ctx.sessions) c[id] = l.row.lastSeq;
    return c;
  }

  /** Follows OpenCode's event stream forever, reconnecting (and backfilling) after every drop. */
  private async follow(firstConnect: () => void): Promise<void> {
    const { ctx } = this;
    let attempt = 0;
    while (!ctx.stopped) {
      try {
        await ctx.oc.follow((e) => this.onLive(e, firstConnect), this.abort.signal);
        attempt = 0;
      } catch (e: any) {
        if (ctx.stopped) return;
        if (attempt++ % 20 === 0) ctx.log(`OpenCode event stream: ${e?.message ?? e}; reconnecting`);
      }
      if (ctx.stopped) return;
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** Math.min(attempt, 5), 2_000)));
    }
  }

  private onLive(e: OcLiveEvent, firstConnect: () => void): void {
    const { ctx } = this;
    if (e.kind === 'connected') {
      this.stats.connects++;
      ctx.log(`connected to OpenCode's event stream (${this.stats.connects})`);
      // Subscribed first, then backfilled: events that arrive meanwhile are applied in seq order after it.
      // A backfill that fails (OpenCode slow to answer its first requests, e.g. while loading plugins) is
      // tried again for as long as this connection is the current one: start() waits for a success.
      const connection = this.stats.connects;
      void ctx.enqueue(async () => {
        for (let attempt = 0; !ctx.stopped && connection === this.stats.connects; attempt++) {
          try {
            await this.backfill();
            firstConnect();
            await this.lease.refreshModels();
            return;
          } catch (err: any) {
            ctx.log(`backfill: ${err?.message ?? err}; trying again`);
            await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** attempt, 5_000)));
          }
        }
      }).catch((err) => ctx.log(`backfill: ${err?.message ?? err}`));
      return;
    }
    if (e.kind === 'status') {
      ctx.statusChanged(e.sessionID, e.status.type !== 'idle');
      if (e.status.type === 'idle') void ctx.enqueue(() => this.idle(e.sessionID));
      return;
    }
    void ctx.enqueue(() => this.onSync(e.event));
  }

  private async backfill() {
    const { ctx } = this;
    this.stats.backfills++;
    const before = await ctx.oc.status();
    const events = await ctx.oc.history(this.cursors());
    ctx.log(`backfill: ${events.length} events`);
    await this.applyAll(events);
    // Steps left open by an OpenCode that stopped (restart, crash): OpenCode is idle, they never finish.
    // Idle both before and after reading the history: nothing started in between.
    const after = await ctx.oc.status();
    const idle = (s: Record<string, { type: string }>, id: string) => !s[id] || s[id].type === 'idle';
    for (const [id, l] of ctx.sessions) {
      ctx.busy.set(id, !idle(after, id));
      if (idle(before, id) && idle(after, id)) await this.idle(id);
      else if (!idle(after, id)) await this.mirror.restoreJobs(l);
    }
  }

  private async applyAll(events: OcSyncEvent[]) {
    // Parents first: sessions in order of their first event's creation, events in seq order per session.
    const bySession = new Map<string, OcSyncEvent[]>();
    for (const ev of events) {
      const list = bySession.get(ev.sessionID) ?? [];
      list.push(ev);
      bySession.set(ev.sessionID, list);
    }
    const order = [...bySession.keys()].sort((a, b) => (a < b ? -1 : 1)); // OpenCode ids sort by creation time
    const done = new Set<string>();
    const run = async (sid: string) => {
      if (done.has(sid)) return;
      done.add(sid);
      const list = bySession.get(sid)!.sort((x, y) => x.seq - y.seq);
      const first = list[0];
      const parent = first?.type.startsWith('session.created') ? first.data?.info?.parentID : undefined;
      if (parent && bySession.has(parent)) await run(parent);
      for (const ev of list) await this.applyOne(ev, FROM_HISTORY);
    };
    for (const sid of order) await run(sid);
  }

  private async onSync(ev: OcSyncEvent) {
    const l = this.ctx.sessions.get(ev.sessionID);
    const last = l ? l.row.lastSeq : -1;
    if (ev.seq <= last) { this.stats.skipped++; return; }
    if (ev.seq === last + 1) {
      const time = baseType(ev.type) === 'message.part.updated' && typeof ev.data?.time === 'number' ? ev.data.time : null;
      return this.applyOne(ev, { live: true, time });
    }
    // A gap (missed events): read the session's history from the stored cursor.
    const events = await this.ctx.oc.history({ [ev.sessionID]: last });
    await this.applyAll(events.filter((x) => x.sessionID === ev.sessionID));
  }

  /** One durable event: mapped, performed and stored with its cursor, as one transaction of the session. */
  private async applyOne(ev: OcSyncEvent, at: Moment) {
    const { ctx } = this;
    const l = ctx.liveSession(ev.sessionID);
    if (ev.seq <= l.row.lastSeq) { this.stats.skipped++; return; }
    if (ev.seq !== l.row.lastSeq + 1) throw new Error(`history gap in ${ev.sessionID}: ${l.row.lastSeq} -> ${ev.seq}`);
    const type = baseType(ev.type);
    if (process.env.BRIDGE_TRACE) ctx.log(`apply ${ev.sessionID}#${ev.seq} ${type} ${ev.data?.part?.type ?? ev.data?.info?.role ?? ''}`);
    // The step boundary's time (OpenCode emits a step's tree right after capturing it); history: none.
    const moment: Moment = at.live ? at : { live: false, time: type === 'message.part.updated' && typeof ev.data?.time === 'number' ? ev.data.time : null };
    if (type !== 'session.created' && type !== 'session.updated' && !l.row.sessionID && !l.st.removed) {
      // History that starts without a session.created we know (should not happen): read the session.
      const info = await ctx.oc.getSession(ev.sessionID).catch(() => null);
      if (info) await this.commit(l, (w) => this.mirror.perform(w, mapSessionInfo(this.view(w), info)));
    }
    const named = messageNamed(ev);
    const mirrored = named ? await ctx.store.messageByOc(named) : null;
    await this.commit(l, async (w) => {
      await this.mirror.perform(w, mapEvent(this.view(w), ev, { mirrored }), moment);
      w.row.lastSeq = ev.seq;
    });
    this.stats.applied++;
  }
}
