// The gateway-to-OpenCode direction: each bridged session's `sessionEvents` (from its stored cursor)
// applied to OpenCode: a correction PATCHes the OpenCode part, a retraction deletes the OpenCode message,
// a seal fences the session, a removal stops the following. With the echo tracking both ways: the
// bridge's own PATCHes coming back from OpenCode (SessionState.echoes, persisted) and its own
// corrections coming back from the gateway (counted here, in memory).
import { TranscriptEventsDocument } from '../../client/index.js';
import { OpencodeError } from './client.js';
import type { BridgeContext, Live } from './context.js';

type GatewayEvent = { cursor: string; sequence: number; type: string; messageID: string | null; partID: string | null; message: any };

export class GatewayToOpencode {
  /** Gateway session id -> its sessionEvents subscription. */
  private subs = new Map<string, () => void>();
  /** Gateway part id -> corrections the bridge made whose `message.part_corrected` event it has not seen yet. */
  private ownCorrections = new Map<string, number>();

  constructor(private readonly ctx: BridgeContext) {}

  /** Follows the gateway session of `l` (once; never a removed one). */
  watch(l: Live) {
    const sessionID = l.row.sessionID;
    if (!sessionID || l.st.removed || this.subs.has(sessionID)) return;
    // Re-subscribed from the latest handled cursor whenever the gateway ends the stream; none once removed.
    this.subs.set(sessionID, this.ctx.gw.subscribe(TranscriptEventsDocument,
      () => (l.st.removed ? null : { sessionID, after: l.st.eventsCursor ?? null }), 'plugin',
      (d) => this.onEvent(l, d.sessionEvents as GatewayEvent),
      // Gone from the gateway (removed while the bridge was away): stop following it, for good.
      () => this.ctx.enqueue(async () => { this.ctx.log(`gateway session ${sessionID} is gone: no longer followed`); l.st.removed = true; await this.ctx.persist(l); })));
  }

  unwatch(sessionID: string) {
    this.subs.get(sessionID)?.();
    this.subs.delete(sessionID);
  }

  stop() {
    for (const u of this.subs.values()) u();
  }

  /** Before the bridge corrects a gateway part itself (an OpenCode edit mirrored): its event is not applied back. */
  expectOwnCorrection(partID: string) {
    this.ownCorrections.set(partID, (this.ownCorrections.get(partID) ?? 0) + 1);
  }

  ownCorrectionFailed(partID: string) {
    this.ownCorrections.set(partID, (this.ownCorrections.get(partID) ?? 1) - 1);
  }

  private async onEvent(l: Live, ev: GatewayEvent) {
    const { ctx } = this;
    if (!ev || (l.st.eventsSeq ?? 0) >= ev.sequence) return;
    // Sealed on the gateway (the seal's first commit): fence the OpenCode session at once, before any
    // command for its running work arrives (an idle session gets none).
    if (ev.type === 'session.sealing' || ev.type === 'session.sealed') ctx.fence(l);
    if (ev.type === 'session.removed') {
      // Removed on the gateway (its REMOVE_SESSION command removes it in OpenCode): nothing more to follow.
      await ctx.enqueue(async () => { l.st.removed = true; await ctx.persist(l); });
      if (l.row.sessionID) this.unwatch(l.row.sessionID);
      return;
    }
    if (ev.type === 'message.part_corrected' || ev.type === 'message.retracted') {
      const stored = ev.messageID ? await ctx.store.message(ev.messageID) : null;
      if (stored && ev.type === 'message.retracted') {
        await ctx.enqueue(async () => {
          l.st.deletedByGateway = [...(l.st.deletedByGateway ?? []), stored.ocMessageID].slice(-1000);
          await ctx.persist(l);
        });
        await ctx.ocRetry('OpenCode delete', () => ctx.oc.deleteMessage(stored.ocSessionID, stored.ocMessageID)).catch((e) => {
          if (ctx.stopped) throw e; // not handled: replayed from the stored cursor on the next start
          if (!(e instanceof OpencodeError && e.status === 404)) ctx.log(`OpenCode delete ${stored.ocMessageID}: ${e.message}`);
        });
      } else if (stored && ev.partID && stored.parts[ev.partID]) {
        const own = this.ownCorrections.get(ev.partID) ?? 0;
        if (own > 0) {
          // The bridge's own correction (an OpenCode edit mirrored): OpenCode has that text already.
          if (own === 1) this.ownCorrections.delete(ev.partID);
          else this.ownCorrections.set(ev.partID, own - 1);
        } else {
          const text = ev.message?.parts?.find((p: any) => p.id === ev.partID)?.text;
          const ocPartID = stored.parts[ev.partID];
          if (typeof text === 'string') {
            await ctx.ocRetry('OpenCode correction', () => this.correctInOpencode(l, stored.ocSessionID, stored.ocMessageID, ocPartID, text))
              .catch((e) => { if (ctx.stopped) throw e; ctx.log(`OpenCode correction of ${ocPartID}: ${e.message}`); });
          }
        }
      }
    }
    await ctx.enqueue(async () => {
      l.st.eventsSeq = Math.max(l.st.eventsSeq ?? 0, ev.sequence);
      l.st.eventsCursor = ev.cursor;
      await ctx.persist(l);
    });
  }

  /** A gateway correction PATCHed into OpenCode, unless OpenCode's part reads that text already. */
  private async correctInOpencode(l: Live, ocSessionID: string, ocMessageID: string, ocPartID: string, text: string) {
    const { ctx } = this;
    const msg = (await ctx.oc.messages(ocSessionID)).find((m) => m.info.id === ocMessageID);
    const part = msg?.parts.find((p) => p.id === ocPartID);
    if (!part || part.type !== 'text' || part.text === text) return;
    // Expect the echo (OpenCode's `message.part.updated` with this text) before it can arrive: it must not
    // come back to the gateway as an OpenCode edit.
    await ctx.enqueue(async () => {
      const echoes = (l.st.echoes ??= {});
      echoes[ocPartID] = [...(echoes[ocPartID] ?? []), text].slice(-5);
      await ctx.persist(l);
    });
    try {
      await ctx.oc.updatePart({ ...part, text });
    } catch (e) {
      await ctx.enqueue(async () => {
        const echoes = l.st.echoes?.[ocPartID];
        const i = echoes?.lastIndexOf(text) ?? -1;
        if (echoes && i >= 0) echoes.splice(i, 1);
        await ctx.persist(l);
      });
      throw e;
    }
  }
}
