// The OpenCode bridge as a host of the gateway: the shared lease (bridge/common/host-lease.ts) with
// OpenCode's identity: its name, its capabilities (exclusive admission only behind the admission proxy)
// and the models OpenCode's providers list.
import { HostLease as CommonLease, type Command, type HostIdentity, type Model } from '../common/host-lease.js';
import type { BridgeContext } from './context.js';

export type { Command } from '../common/host-lease.js';

/** The models of OpenCode's `GET /config/providers` answer. */
function modelsOf(p: { providers?: { id: string; models?: Record<string, unknown> }[] }): Model[] {
  return (p.providers ?? []).flatMap((x) => Object.keys(x.models ?? {}).map((m) => ({ providerID: x.id, modelID: m }))).slice(0, 2_000);
}

function opencodeIdentity(ctx: BridgeContext): HostIdentity {
  return {
    name: () => `opencode ${ctx.oc.base}`,
    // Without the admission proxy OpenCode also admits prompts from its other clients: not exclusive.
    // compact: OpenCode's summarize; generate: a hidden session; sessions: create/rename/remove there; prompt:
    // OpenCode's own prompt API (host-commands.ts).
    capabilities: () => ({ cancel: true, compact: true, generate: true, prompt: true, exclusiveAdmission: !!ctx.opts.admission, sessions: true }),
    // OpenCode unreachable (not started yet, restarting): the last list; registered again once it answers.
    models: async () => {
      const p = await ctx.oc.providers().catch((e) => { ctx.log(`OpenCode providers: ${e.message}`); return null; });
      return p ? modelsOf(p) : null;
    },
    storedHostID: () => ctx.store.hostID(),
    storeHostID: (id) => ctx.store.setHostID(id),
  };
}

export class HostLease extends CommonLease {
  constructor(ctx: BridgeContext, onCommand: (c: Command) => Promise<void>) {
    super({ get gw() { return ctx.gw; }, get stopped() { return ctx.stopped; }, log: (m) => ctx.log(m), get leaseMs() { return ctx.opts.leaseMs ?? 30_000; } },
      opencodeIdentity(ctx), onCommand);
  }
}
