// The bridge as a host of the gateway: registration (the stored hostID again, a new one only if the
// gateway forgot it), the lease renewal, the models OpenCode's providers list, host mutations that are
// refused when the lease lapsed, and the subscription of the host's commands.
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { HostCommandStreamDocument, RegisterHostDocument, RenewHostLeaseDocument } from '../../client/index.js';
import type { BridgeContext } from './context.js';
import { GatewayError, type Success } from './gateway.js';

/** A command of the gateway for this host (seal, session mutations, compaction, generation). */
export type Command = { id: string; kind: string; sessionID: string; jobID: string | null; executionID: string | null; payload?: unknown };

type Model = { providerID: string; modelID: string };

/** The gateway refused new work because of the host itself: forgotten, or its lease lapsed (gateway was unreachable). */
function hostRefused(e: unknown): e is GatewayError {
  return e instanceof GatewayError && (e.tag === 'HostNotFoundError' || (e.tag === 'InvalidRequestError' && e.fields.field === 'hostID'));
}

/** The models of OpenCode's `GET /config/providers` answer. */
function modelsOf(p: { providers?: { id: string; models?: Record<string, unknown> }[] }): Model[] {
  return (p.providers ?? []).flatMap((x) => Object.keys(x.models ?? {}).map((m) => ({ providerID: x.id, modelID: m }))).slice(0, 2_000);
}

export class HostLease {
  hostID: string | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  /** The renewal in flight, if any (one at a time; awaited by `settle`). */
  private renewal: Promise<void> | null = null;
  private models: Model[] = [];
  private registeredModels = '[]';
  private commandSub: (() => void) | null = null;
  private commandSubFor: string | null = null;

  constructor(private readonly ctx: BridgeContext, private readonly onCommand: (c: Command) => Promise<void>) {}

  async start() {
    await this.register();
    const every = Math.max(300, Math.floor((this.ctx.opts.leaseMs ?? 30_000) / 3));
    this.renewTimer = setInterval(() => void this.renew(), every);
    this.renewTimer.unref();
    this.watchCommands();
  }

  /** No renewal starts after this; `settle` waits for one in flight. */
  stop() {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    this.commandSub?.();
  }

  /**
   * Resolves once the renewal in flight at `stop` has ended: a stopped bridge makes no call after its
   * stop has resolved (otherwise a late renewal could extend the lease of a host that is gone, and the
   * gateway would keep its work RUNNING instead of giving it up when the lease lapses).
   */
  async settle(): Promise<void> {
    await this.renewal;
  }

  async register() {
    const { ctx } = this;
    const previous = this.hostID ?? (await ctx.store.hostID());
    const input = {
      hostID: previous, name: `opencode ${ctx.oc.base}`, leaseMs: ctx.opts.leaseMs ?? 30_000,
      // Without the admission proxy OpenCode also admits prompts from its other clients: not exclusive.
      // compact: OpenCode's summarize; generate: a hidden session; sessions: create/rename/remove there.
      capabilities: { cancel: true, compact: true, generate: true, exclusiveAdmission: !!ctx.opts.admission, sessions: true },
      models: await this.opencodeModels(),
    };
    let h;
    try {
      h = await ctx.gw.call(RegisterHostDocument, { input });
    } catch (e) {
      if (!(e instanceof GatewayError) || !previous) throw e;
      h = await ctx.gw.call(RegisterHostDocument, { input: { ...input, hostID: null } });
    }
    if (previous && previous !== h.id) ctx.log(`the gateway forgot host ${previous}: registered again as ${h.id}`);
    this.hostID = h.id;
    await ctx.store.setHostID(h.id);
    if (this.commandSub && this.commandSubFor !== h.id) this.watchCommands();
  }

  /** OpenCode's providers may have changed (or were unknown at start): declares its models again if so. */
  async refreshModels() {
    const p = await this.ctx.oc.providers().catch(() => null);
    if (p && JSON.stringify(modelsOf(p)) !== this.registeredModels) await this.register().catch((e) => this.ctx.log(`register: ${e?.message ?? e}`));
  }

  /** The models OpenCode's configured providers list (what `generate` may ask for; anything else is ModelNotFoundError). */
  private async opencodeModels(): Promise<Model[]> {
    // OpenCode unreachable (not started yet, restarting): the last list; registered again once it answers.
    const p = await this.ctx.oc.providers().catch((e) => { this.ctx.log(`OpenCode providers: ${e.message}`); return null; });
    if (p) this.models = modelsOf(p);
    this.registeredModels = JSON.stringify(this.models);
    return this.models;
  }

  /** (Re)subscribes the host's commands for the current hostID. */
  private watchCommands() {
    this.commandSub?.();
    this.commandSubFor = this.hostID;
    this.commandSub = this.ctx.gw.subscribe(HostCommandStreamDocument,
      () => (this.hostID ? { hostID: this.hostID } : null), 'host', (d) => this.onCommand(d.hostCommands as Command));
  }

  private renew() {
    // One renewal at a time: while the gateway is down a renewal keeps retrying (Gateway.request), and
    // the timer must not stack more of them behind it.
    if (this.ctx.stopped || !this.hostID || this.renewal) return;
    const hostID = this.hostID;
    this.renewal = (async () => {
      try {
        await this.ctx.gw.call(RenewHostLeaseDocument, { input: { hostID } });
      } catch (e) {
        if (e instanceof GatewayError && !this.ctx.stopped) await this.register().catch(() => {});
      }
    })().finally(() => { this.renewal = null; });
  }

  /**
   * A host mutation that admits new work (beginExecution, startJob). Refused because the gateway forgot the
   * host or its lease lapsed (the gateway was down or unreachable for longer than the lease): register
   * again (same hostID when the gateway still knows it) and try once more.
   */
  async call<TData, TInput extends { hostID: string }>(doc: TypedDocumentNode<TData, { input: TInput }>, input: Omit<TInput, 'hostID'>): Promise<Success<TData>> {
    try {
      return await this.ctx.gw.call(doc, { input: { ...input, hostID: this.hostID! } as TInput });
    } catch (e) {
      if (!hostRefused(e)) throw e;
      this.ctx.log(`${e.message}; registering again`);
      await this.register();
      return await this.ctx.gw.call(doc, { input: { ...input, hostID: this.hostID! } as TInput });
    }
  }
}
