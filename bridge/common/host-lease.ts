// A bridged runtime as a host of the gateway, shared by the OpenCode bridge (bridge/opencode/) and the
// Claude Code host (bridge/claude-code/): registration (the stored hostID again, a new one only if the
// gateway forgot it), the lease renewal, the declared models, host mutations that are refused when the
// lease lapsed (registered again, tried once more), and the subscription of the host's commands.
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { HostCommandStreamDocument, RegisterHostDocument, RenewHostLeaseDocument } from '../../client/index.js';
import { GatewayError, type Gateway, type Success } from './gateway.js';

/** A command of the gateway for this host (seal, session mutations, compaction, generation). */
export type Command = { id: string; kind: string; reason?: string | null; sessionID: string; jobID: string | null; executionID: string | null; payload?: unknown };

export type Model = { providerID: string; modelID: string };

export interface HostCapabilities { cancel: boolean; compact: boolean; generate: boolean; exclusiveAdmission: boolean; sessions: boolean; prompt?: boolean }

/** Who the host is: its name, capabilities and models, and where its hostID is kept across restarts. */
export interface HostIdentity {
  name(): string;
  capabilities(): HostCapabilities;
  /** The runtime's models now; null when they cannot be read (the last list is declared again). */
  models(): Promise<Model[] | null>;
  storedHostID(): Promise<string | null>;
  storeHostID(id: string): Promise<void>;
}

/** What the lease needs of its bridge. */
export interface LeaseContext {
  readonly gw: Gateway;
  readonly stopped: boolean;
  log(m: string): void;
  readonly leaseMs: number;
}

/** The gateway refused new work because of the host itself: forgotten, or its lease lapsed (gateway was unreachable). */
function hostRefused(e: unknown): e is GatewayError {
  return e instanceof GatewayError && (e.tag === 'HostNotFoundError' || (e.tag === 'InvalidRequestError' && e.fields.field === 'hostID'));
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

  constructor(private readonly ctx: LeaseContext, private readonly identity: HostIdentity, private readonly onCommand: (c: Command) => Promise<void>) {}

  async start() {
    await this.register();
    const every = Math.max(300, Math.floor(this.ctx.leaseMs / 3));
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
    const previous = this.hostID ?? (await this.identity.storedHostID());
    const models = await this.identity.models().catch((e) => { ctx.log(`models: ${e?.message ?? e}`); return null; });
    if (models) this.models = models;
    this.registeredModels = JSON.stringify(this.models);
    const input = { hostID: previous, name: this.identity.name(), leaseMs: ctx.leaseMs, capabilities: this.identity.capabilities(), models: this.models };
    let h;
    try {
      h = await ctx.gw.call(RegisterHostDocument, { input });
    } catch (e) {
      if (!(e instanceof GatewayError) || !previous) throw e;
      h = await ctx.gw.call(RegisterHostDocument, { input: { ...input, hostID: null } });
    }
    if (previous && previous !== h.id) ctx.log(`the gateway forgot host ${previous}: registered again as ${h.id}`);
    this.hostID = h.id;
    await this.identity.storeHostID(h.id);
    if (this.commandSub && this.commandSubFor !== h.id) this.watchCommands();
  }

  /** The runtime's models may have changed (or were unknown at start): declares them again if so. */
  async refreshModels() {
    const m = await this.identity.models().catch(() => null);
    if (m && JSON.stringify(m) !== this.registeredModels) await this.register().catch((e) => this.ctx.log(`register: ${e?.message ?? e}`));
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
   * A host mutation that admits new work (beginExecution, startJob, admitWork). Refused because the gateway
   * forgot the host or its lease lapsed (the gateway was down or unreachable for longer than the lease):
   * register again (same hostID when the gateway still knows it) and try once more.
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
