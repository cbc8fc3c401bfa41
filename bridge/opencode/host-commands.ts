// The host commands of the gateway, applied to OpenCode: the seal (CLOSE_ADMISSIONS behind the admission
// proxy; INTERRUPT_EXECUTION / CANCEL_JOB otherwise: OpenCode can only abort the whole session), and the
// plugin requests: CREATE_SESSION, RENAME_SESSION, REMOVE_SESSION, COMPACT_SESSION, GENERATE; and PROMPT (review
// comments sent to the agent: a turn of OpenCode's own).
import { AcknowledgeHostCommandDocument, AdmitWorkDocument, ReplyHostCommandDocument, UpdateSessionDocument } from '../../client/index.js';
import { OpencodeError } from './client.js';
import type { BridgeContext, Live } from './context.js';
import { crashPoint } from './gateway.js';
import type { GatewayToOpencode } from './gateway-to-opencode.js';
import type { Command, HostLease } from './host-lease.js';
import type { OpencodeIntake } from './intake.js';

export class HostCommands {
  constructor(private readonly ctx: BridgeContext, private readonly intake: OpencodeIntake, private readonly reverse: GatewayToOpencode,
    private readonly lease: HostLease) {}

  /** A command: applied, then acknowledged (or replied to). A command the bridge stopped during is delivered again on the next start. */
  async handle(c: Command) {
    const { ctx } = this;
    if (!c) return;
    try {
      switch (c.kind) {
        case 'CLOSE_ADMISSIONS': return await this.closeAdmissions(c);
        case 'CREATE_SESSION': return await this.reply(c, () => this.create(c));
        case 'COMPACT_SESSION': return await this.reply(c, () => this.compact(c));
        case 'GENERATE': return await this.reply(c, () => this.generate(c));
        case 'PROMPT': return await this.prompt(c);
        case 'RENAME_SESSION': await this.rename(c); break;
        case 'REMOVE_SESSION': await this.remove(c); break;
        default: await this.abortForSeal(c);
      }
    } catch (e: any) {
      if (ctx.stopped) return; // not acknowledged: delivered again on the next start
      ctx.log(`command ${c.kind} ${c.id}: ${e?.message ?? e}`);
    }
    await this.ack(c);
  }

  private async ack(c: Command) {
    await this.ctx.gw.call(AcknowledgeHostCommandDocument, { input: { commandID: c.id } })
      .catch((e) => this.ctx.log(`acknowledge ${c.id}: ${e.message}`));
  }

  /** Runs a request and sends its result (or its error) with replyHostCommand. */
  private async reply(c: Command, fn: () => Promise<Record<string, unknown>>) {
    let result: Record<string, unknown> | null = null;
    let error: string | null = null;
    try {
      result = await fn();
    } catch (e: any) {
      if (this.ctx.stopped) return;
      error = String(e?.message ?? e).slice(0, 2_000) || 'failed';
      this.ctx.log(`${c.kind} ${c.id}: ${error}`);
    }
    await this.ctx.gw.call(ReplyHostCommandDocument, { input: { commandID: c.id, ...(error !== null ? { error } : { result }) } })
      .catch((e) => this.ctx.log(`reply ${c.id}: ${e.message}`));
  }

  /** Fence, mark sealing, then the abort(s) (`stop`), wait for OpenCode idle and apply what the abort recorded. */
  private async stopForSeal(l: Live, stop: () => Promise<boolean>) {
    const { ctx } = this;
    ctx.fence(l); // before the abort: no new step may start once the running one ends
    await ctx.enqueue(async () => { l.st.sealing = true; await ctx.persist(l); });
    if (!(await stop())) return false;
    // Let the abort's events (tool ended, message aborted) be applied, then settle whatever is left.
    await this.intake.settled().catch(() => {});
    await ctx.enqueue(() => this.intake.idle(l.row.ocSessionID));
    return true;
  }

  /**
   * CLOSE_ADMISSIONS: the proxy stops forwarding for the session and waits for what it
   * forwarded; then abort until OpenCode reports the session idle, apply what the abort recorded, and
   * only then acknowledge: the acknowledgement tells the gateway that nothing admitted can still run.
   */
  private async closeAdmissions(c: Command) {
    const { ctx } = this;
    const ocSessionID = ctx.byGateway.get(c.sessionID);
    if (ocSessionID) {
      const l = ctx.sessions.get(ocSessionID)!;
      const abort = () => ctx.oc.abort(ocSessionID).catch((e) => ctx.log(`abort ${ocSessionID}: ${e.message}`));
      const stopped = await this.stopForSeal(l, async () => {
        while (!(await ctx.opts.admission!.quiesce(ocSessionID, abort))) {
          if (ctx.stopped) return false;
          ctx.log(`seal of ${ocSessionID}: a forwarded request is still running; aborting again`);
        }
        for (;;) {
          await abort();
          if (await ctx.waitIdle(ocSessionID, 30_000)) return true;
          if (ctx.stopped) return false;
        }
      });
      if (!stopped) return; // stopping: not acknowledged, delivered again on the next start
    }
    await this.ack(c);
  }

  /** INTERRUPT_EXECUTION / CANCEL_JOB of a seal without the proxy: abort the session, wait for idle. */
  private async abortForSeal(c: Command) {
    const { ctx } = this;
    const ocSessionID = ctx.byGateway.get(c.sessionID);
    if (!ocSessionID) return;
    await this.stopForSeal(ctx.sessions.get(ocSessionID)!, async () => {
      await ctx.oc.abort(ocSessionID).catch((e) => ctx.log(`abort ${ocSessionID}: ${e.message}`));
      await ctx.waitIdle(ocSessionID, 30_000);
      return true;
    });
  }

  /**
   * CREATE_SESSION: the child is created in OpenCode, then mirrored at once (its later session.created
   * changes nothing), with the command's metadata. Idempotent across a crash: before creating, the
   * parent's current children are recorded against the command (persisted); a redelivered command whose
   * child was created but not recorded finds it among the children created since (same title, claimed by
   * no other command) instead of creating a second one.
   */
  private async create(c: Command) {
    const { ctx } = this;
    const p = c.payload as { parentID: string; title?: string; metadata?: Record<string, unknown> };
    const parent = ctx.liveOf(p.parentID);
    const parentOc = parent.row.ocSessionID;
    return ctx.enqueue(async () => {
      let ocID = parent.st.created?.[c.id];
      if (!ocID) {
        const attempt = parent.st.creating?.[c.id];
        if (attempt) ocID = await this.findCreated(parent, c.id, attempt, p.title ?? '');
        if (!ocID) {
          const children = attempt ?? (await ctx.ocRetry('OpenCode children', () => ctx.oc.children(parentOc))).map((s) => s.id);
          (parent.st.creating ??= {})[c.id] = children.slice(-1000);
          await ctx.persist(parent);
          const info = await ctx.oc.createSession({ parentID: parentOc, ...(p.title ? { title: p.title } : {}) });
          crashPoint('opencode:createSession');
          ocID = info.id;
        }
        (parent.st.created ??= {})[c.id] = ocID;
        delete parent.st.creating![c.id];
        parent.st.created = Object.fromEntries(Object.entries(parent.st.created).slice(-200));
        await ctx.persist(parent);
      }
      const l = ctx.liveSession(ocID);
      const metadata = p.metadata ?? {};
      if (!l.row.sessionID) await this.intake.mirrorSession(l, await ctx.oc.getSession(ocID), metadata);
      else if (Object.keys(metadata).length) {
        // Mirrored already (its session.created was applied before the command came back after a crash):
        // the command's metadata still reaches the mirror.
        await ctx.gw.call(UpdateSessionDocument, { input: { sessionID: l.row.sessionID, metadata } }, 'plugin');
      }
      if (!l.row.sessionID) throw new Error(`OpenCode session ${ocID} could not be mirrored`);
      return { sessionID: l.row.sessionID };
    });
  }

  /**
   * The child a previous attempt of command `id` created: new since `before`, claimed by no other command,
   * with the title asked for (no title asked: one that has no message yet, unlike a subagent's child,
   * which gets its prompt at once).
   */
  private async findCreated(parent: Live, id: string, before: string[], title: string): Promise<string | undefined> {
    const { ctx } = this;
    const known = new Set(before);
    const claimed = new Set(Object.entries(parent.st.created ?? {}).filter(([cid]) => cid !== id).map(([, oc]) => oc));
    const fresh = (await ctx.ocRetry('OpenCode children', () => ctx.oc.children(parent.row.ocSessionID)))
      .filter((s) => !known.has(s.id) && !claimed.has(s.id) && (!title || (s.title ?? '') === title))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const s of fresh) {
      if (title || (await ctx.ocRetry('OpenCode messages', () => ctx.oc.messages(s.id))).length === 0) {
        ctx.log(`CREATE_SESSION ${id}: OpenCode child ${s.id} was created before the bridge stopped; not created again`);
        return s.id;
      }
    }
    return undefined;
  }

  /** RENAME_SESSION: OpenCode's title follows; its session.updated echo then matches the stored title. */
  private async rename(c: Command) {
    const { ctx } = this;
    const title = String((c.payload as { title?: string })?.title ?? '');
    const l = ctx.liveOf(c.sessionID);
    await ctx.enqueue(async () => { l.st.title = title; await ctx.persist(l); });
    const now = await ctx.ocRetry('OpenCode session', () => ctx.oc.getSession(l.row.ocSessionID));
    if (now.title !== title) await ctx.ocRetry('OpenCode rename', () => ctx.oc.updateSession(l.row.ocSessionID, { title }));
  }

  /** REMOVE_SESSION: removed on the gateway already; removed in OpenCode, and no longer followed. */
  private async remove(c: Command) {
    const { ctx } = this;
    const ocID = ctx.byGateway.get(c.sessionID);
    const l = ocID ? ctx.sessions.get(ocID) : undefined;
    if (!l) return; // not one of ours (or already forgotten)
    await ctx.enqueue(async () => { l.st.removed = true; l.st.pending = {}; await ctx.persist(l); });
    this.reverse.unwatch(c.sessionID);
    await ctx.ocRetry('OpenCode delete session', () => ctx.oc.deleteSession(l.row.ocSessionID)).catch((e) => {
      if (!(e instanceof OpencodeError && e.status === 404)) throw e;
    });
  }

  /** The model a request runs with when it names none: the session's last step's, else OpenCode's default. */
  private async defaultModel(l: Live): Promise<{ providerID: string; modelID: string }> {
    const last = Object.values(l.st.steps).reverse().find((s) => s.model)?.model;
    if (last) return last;
    const cfg = await this.ctx.oc.config();
    const m = (cfg.model ?? '').split('/');
    if (m.length >= 2) return { providerID: m[0], modelID: m.slice(1).join('/') };
    throw new Error('OpenCode has no default model');
  }

  /**
   * COMPACT_SESSION: OpenCode's own summarize. The summary message it writes is not mirrored as a step (the
   * gateway records the reply's summary as its compaction); its text is the reply.
   */
  private async compact(c: Command) {
    const { ctx } = this;
    const l = ctx.liveOf(c.sessionID);
    const ocID = l.row.ocSessionID;
    const model = await this.defaultModel(l);
    const before = new Set((await ctx.oc.messages(ocID)).map((m) => m.info.id));
    await ctx.enqueue(async () => { l.st.compacting = true; await ctx.persist(l); });
    try {
      await ctx.oc.summarize(ocID, model);
      const msgs = await ctx.oc.messages(ocID);
      const fresh = msgs.filter((m) => !before.has(m.info.id));
      const summary = fresh.filter((m) => m.info.role === 'assistant' && m.info.summary).at(-1) ?? fresh.filter((m) => m.info.role === 'assistant').at(-1);
      if (!summary) throw new Error('OpenCode wrote no summary');
      if (summary.info.error) throw new Error(`OpenCode's summary failed: ${summary.info.error.name}`);
      const text = summary.parts.filter((p) => p.type === 'text' && p.text).map((p) => p.text).join('\n').trim();
      if (!text) throw new Error('OpenCode\'s summary is empty');
      await ctx.enqueue(async () => {
        l.st.compactionMessages = [...(l.st.compactionMessages ?? []), ...fresh.map((m) => m.info.id)].slice(-100);
        await ctx.persist(l);
      });
      return { summary: text };
    } finally {
      await ctx.enqueue(async () => { l.st.compacting = false; await ctx.persist(l); });
    }
  }

  /**
   * PROMPT: the payload's text is the session's next prompt, given to OpenCode through its own prompt API
   * (`prompt_async`, with the session's model). The bridge recognizes the user message carrying it (the same
   * text) when it mirrors it, and begins the first step answering it with the command's ID: the gateway links
   * that execution to the command and answers its sender (no reply here on success). A refusal or a failure
   * is replied as an error: OpenCode refusing the prompt here, the gateway refusing the step (sealed, busy:
   * mirror.ts), or a turn that ended without any step (session-mapper.ts `mapIdle`). A command redelivered
   * after a restart is not prompted twice. Behind the admission proxy the prompt is admitted first (admitWork).
   */
  private async prompt(c: Command) {
    const { ctx } = this;
    let error: string | null = null;
    try {
      const text = String((c.payload as { text?: unknown } | null)?.text ?? '');
      if (!text.trim()) throw new Error('the PROMPT command carries no text');
      const l = ctx.liveOf(c.sessionID);
      const ocID = l.row.ocSessionID;
      if (l.st.sealing) throw new Error('the session is sealed: OpenCode is not prompted');
      if (ctx.opts.admission) {
        // Behind the admission proxy, OpenCode gets nothing the gateway did not admit: the bridge's own prompt is
        // admitted like a forwarded request (admitWork with the command: the session lock, the seal, the session
        // idle). A seal's CLOSE_ADMISSIONS, delivered after this command, then stops the turn it starts.
        await this.lease.call(AdmitWorkDocument, { sessionID: c.sessionID, route: 'opencode PROMPT (sendReviewComments)', commandID: c.id });
      }
      const fresh = await ctx.enqueue(async () => {
        if (l.st.prompted?.includes(c.id)) return false;
        (l.st.prompting ??= {})[c.id] = { text };
        l.st.prompted = [...(l.st.prompted ?? []), c.id].slice(-100);
        await ctx.persist(l);
        return true;
      });
      if (!fresh) return; // given to OpenCode before a restart: its turn answers the command
      try {
        const model = await this.defaultModel(l);
        await ctx.oc.promptAsync(ocID, text, model);
      } catch (e) {
        await ctx.enqueue(async () => { delete l.st.prompting?.[c.id]; await ctx.persist(l); });
        throw e;
      }
    } catch (e: any) {
      if (ctx.stopped) return;
      error = String(e?.message ?? e).slice(0, 2_000) || 'failed';
      ctx.log(`PROMPT ${c.id}: ${error}`);
    }
    if (error !== null) {
      await ctx.gw.call(ReplyHostCommandDocument, { input: { commandID: c.id, error } }).catch((e) => ctx.log(`reply ${c.id}: ${e.message}`));
    }
  }

  /**
   * GENERATE: a hidden completion. A temporary OpenCode session (never mirrored) gets the gateway's context
   * and the prompt, with the requested model and every tool off; it is deleted afterwards. The session
   * itself is untouched.
   */
  private async generate(c: Command) {
    const { ctx } = this;
    const p = c.payload as { prompt: string; model: { providerID: string; modelID: string }; context: { role: string; text: string }[] };
    const l = ctx.liveOf(c.sessionID);
    const tmp = await ctx.enqueue(async () => {
      const info = await ctx.oc.createSession({ title: `gateway generate ${c.id} (hidden)` });
      const h = ctx.liveSession(info.id);
      h.st.hidden = true;
      h.st.removed = true;
      h.st.directory = l.st.directory;
      await ctx.persist(h);
      return info.id;
    });
    try {
      const tools = Object.fromEntries((await ctx.oc.toolIDs().catch(() => [] as string[])).map((t) => [t, false]));
      const context = p.context.map((m) => `${m.role}: ${m.text}`).join('\n\n');
      const text = context ? `Conversation so far:\n\n${context}\n\n---\n\n${p.prompt}` : p.prompt;
      const r = await ctx.oc.prompt(tmp, { parts: [{ type: 'text', text }], model: p.model, tools });
      if (r.info.error) throw new Error(`${r.info.error.name}: ${r.info.error.data?.message ?? ''}`);
      if (r.info.providerID !== p.model.providerID || r.info.modelID !== p.model.modelID) {
        throw new Error(`OpenCode answered with ${r.info.providerID}/${r.info.modelID}, not the model asked for`);
      }
      return {
        text: r.parts.filter((x) => x.type === 'text' && x.text).map((x) => x.text).join('\n'),
        inputTokens: Math.round(r.info.tokens?.input ?? 0), outputTokens: Math.round(r.info.tokens?.output ?? 0),
        providerID: r.info.providerID, modelID: r.info.modelID,
      };
    } finally {
      await ctx.oc.deleteSession(tmp).catch((e) => ctx.log(`delete hidden session ${tmp}: ${e.message}`));
    }
  }
}
