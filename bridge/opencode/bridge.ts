// The OpenCode bridge: a host of the gateway that mirrors an OpenCode server's durable history into the
// gateway and applies the gateway's corrections, retractions, seals and session requests to OpenCode.
// It reaches the gateway only through its public API (the typed client), and keeps its own state in its
// own store. The concerns, one module each:
//   host-lease.ts          registration, lease, models, the host's command subscription
//   host-commands.ts       the commands applied to OpenCode (seal, create/rename/remove, compact, generate)
//   intake.ts              OpenCode's event stream and history, with the per-session cursors
//   session-mapper.ts      pure: one OpenCode event and the session's state in, intended gateway calls out
//   mirror.ts              performs those calls through the typed client (snapshots: snapshot-sink.ts)
//   gateway-to-opencode.ts the gateway's session events applied to OpenCode, with the echo tracking
//   proxy.ts / serve.ts    the admission proxy in front of a private OpenCode
import { OpencodeClient } from './client.js';
import { BridgeContext, type BridgeOptions, type SnapshotSink } from './context.js';
import { Gateway } from './gateway.js';
import { GatewayToOpencode } from './gateway-to-opencode.js';
import { HostCommands } from './host-commands.js';
import { HostLease } from './host-lease.js';
import { OpencodeIntake } from './intake.js';
import { GatewayMirror } from './mirror.js';
import { GraphqlSnapshotSink } from './snapshot-sink.js';
import { ensurePrivateDir } from '../common/private-files.js';

export type { BridgeOptions, SnapshotSink } from './context.js';

export class OpencodeBridge {
  readonly oc: OpencodeClient;
  readonly gw: Gateway;
  private readonly ctx: BridgeContext;
  private readonly lease: HostLease;
  private readonly reverse: GatewayToOpencode;
  private readonly intake: OpencodeIntake;
  /** Where step boundaries are uploaded (its counters: tests). */
  private readonly sink: SnapshotSink | null;

  constructor(readonly opts: BridgeOptions) {
    const log = opts.log ?? (() => {});
    this.oc = new OpencodeClient(opts.opencodeUrl, opts.opencodePassword ? { password: opts.opencodePassword } : undefined);
    this.gw = new Gateway(opts.gatewayUrl, opts.hostToken, opts.pluginToken ?? opts.hostToken, log);
    this.ctx = new BridgeContext(opts, this.oc, this.gw);
    const sink = this.sink = opts.snapshots === undefined ? new GraphqlSnapshotSink(this.gw) : opts.snapshots;
    let commands: HostCommands | null = null;
    this.lease = new HostLease(this.ctx, async (c) => { await commands?.handle(c); });
    this.reverse = new GatewayToOpencode(this.ctx);
    this.intake = new OpencodeIntake(this.ctx, this.lease, new GatewayMirror(this.ctx, this.lease, this.reverse, sink), this.reverse);
    commands = new HostCommands(this.ctx, this.intake, this.reverse, this.lease);
  }

  /** The host ID the gateway knows this bridge by (null before start). */
  get hostID(): string | null { return this.lease.hostID; }
  /** Counters for tests and logs. */
  get stats() { return this.intake.stats; }

  async start(): Promise<void> {
    // Before anything is registered or read: a fence folder others can write would let them lift a seal's fence.
    ensurePrivateDir(this.ctx.fenceDir, 'the fence folder (--fence-dir)');
    await this.ctx.load();
    await this.lease.start();
    for (const l of this.ctx.sessions.values()) this.reverse.watch(l);
    await this.intake.start();
  }

  async stop(): Promise<void> {
    this.ctx.stopped = true;
    this.lease.stop();
    this.reverse.stop();
    // A gateway call retrying while the gateway is down gives up now (so a stop never waits for it).
    this.gw.stopped = true;
    await this.intake.stop();
    await this.lease.settle();
    await this.ctx.drained();
    await this.gw.close();
  }

  /** Resolves when everything OpenCode has recorded so far has been applied. */
  settled(): Promise<void> {
    return this.intake.settled();
  }

  /** The gateway session mirroring an OpenCode session, if the bridge has mirrored it (the proxy's admission). */
  gatewaySessionOf(ocSessionID: string): string | null {
    return this.ctx.sessions.get(ocSessionID)?.row.sessionID ?? null;
  }
}
