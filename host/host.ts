import { spawn, type ChildProcess } from 'node:child_process';
import { GatewayClient, GatewayCallError } from '../client/index.js';
import {
  AppendMessageDocument, BackgroundJobDocument, BeginExecutionDocument, FinishJobDocument, RegisterHostDocument,
  RenewHostLeaseDocument, RestoreJobDocument, SettleExecutionDocument, StartJobDocument,
  type AppendMessageInput, type JobKind, type Trigger, type ExecutionStatus, type InterruptReason,
} from '../client/generated.js';

export interface ReferenceHostOptions {
  url: string;
  token: string;
  wsUrl?: string;
  name?: string;
  /** Re-register under this ID (after a restart) to take the host's work back. */
  hostID?: string;
  leaseMs?: number;
  capabilities?: { cancel?: boolean; compact?: boolean; generate?: boolean };
  models?: { providerID: string; modelID: string }[];
  /** Grace period between SIGTERM and SIGKILL when cancelling a job. */
  killGraceMs?: number;
  /** Working directory of the jobs' processes. */
  cwd?: string;
}

export interface RunningJob {
  id: string;
  pid: number;
  /** Resolves when the process exited and its end was reported to the gateway. */
  done: Promise<{ status: 'COMPLETED' | 'ERROR' | 'CANCELLED'; exitCode: number | null }>;
  process: ChildProcess;
}

/**
 * The reference host: what a real agent runtime embeds to report its lifecycle to the gateway.
 * It registers and renews its lease, begins and settles executions, appends messages, and runs shell
 * jobs as real child processes (each in its own process group), reporting their exits.
 */
export class ReferenceHost {
  readonly client: GatewayClient;
  id: string | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  readonly jobs = new Map<string, RunningJob>();
  private cancelled = new Set<string>();

  constructor(readonly opts: ReferenceHostOptions) {
    this.client = new GatewayClient({ url: opts.url, token: opts.token, wsUrl: opts.wsUrl });
  }

  async start(): Promise<string> {
    const h = await this.client.call(RegisterHostDocument, {
      input: {
        hostID: this.opts.hostID ?? null,
        name: this.opts.name ?? 'reference-host',
        leaseMs: this.opts.leaseMs ?? 30_000,
        capabilities: { cancel: true, compact: false, generate: false, ...this.opts.capabilities },
        models: this.opts.models ?? [],
      },
    });
    this.id = (h as any).id;
    const every = Math.max(200, Math.floor((this.opts.leaseMs ?? 30_000) / 3));
    this.renewTimer = setInterval(() => {
      this.client.call(RenewHostLeaseDocument, { input: { hostID: this.id! } }).catch(() => {});
    }, every);
    this.renewTimer.unref();
    return this.id!;
  }

  private hostID(): string {
    if (!this.id) throw new Error('host not started');
    return this.id;
  }

  async beginExecution(sessionID: string, trigger: Trigger = 'PROMPT') {
    return this.client.call(BeginExecutionDocument, { input: { sessionID, hostID: this.hostID(), trigger } });
  }

  async settleExecution(executionID: string, status: ExecutionStatus, opts: { interruptReason?: InterruptReason; error?: string } = {}) {
    return this.client.call(SettleExecutionDocument, { input: { executionID, status, ...opts } });
  }

  async appendMessage(input: AppendMessageInput) {
    return this.client.call(AppendMessageDocument, { input });
  }

  async appendText(sessionID: string, executionID: string | null, text: string, origin: AppendMessageInput['origin'] = 'MODEL') {
    return this.appendMessage({
      sessionID,
      executionID,
      role: origin === 'MODEL' ? 'ASSISTANT' : 'USER',
      origin,
      parts: [{ type: 'TEXT', text }],
    });
  }

  /**
   * Admits a job with the gateway first, then starts `bash -c command` in its own process group and
   * reports its exit. A job the gateway refuses (sealed session) never starts a process.
   */
  async runJob(sessionID: string, executionID: string | null, command: string, opts: { kind?: JobKind; title?: string; background?: boolean } = {}): Promise<RunningJob> {
    const job: any = await this.client.call(StartJobDocument, {
      input: {
        sessionID, executionID, hostID: this.hostID(), kind: opts.kind ?? 'SHELL',
        title: opts.title ?? command.slice(0, 80), command, background: opts.background ?? false,
      },
    });
    return this.spawnFor(job.id, command);
  }

  private spawnFor(jobID: string, command: string): RunningJob {
    const child = spawn('bash', ['-c', command], { cwd: this.opts.cwd, detached: true, stdio: 'ignore' });
    child.unref();
    const done = new Promise<{ status: 'COMPLETED' | 'ERROR' | 'CANCELLED'; exitCode: number | null }>((resolve) => {
      child.once('exit', async (code, signal) => {
        const status = this.cancelled.has(jobID) ? 'CANCELLED' : code === 0 ? 'COMPLETED' : 'ERROR';
        const exitCode = code ?? (signal ? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 1) : null);
        this.jobs.delete(jobID);
        await this.reportFinish(jobID, status, exitCode);
        resolve({ status, exitCode });
      });
    });
    const rj: RunningJob = { id: jobID, pid: child.pid!, done, process: child };
    this.jobs.set(jobID, rj);
    return rj;
  }

  private async reportFinish(jobID: string, status: 'COMPLETED' | 'ERROR' | 'CANCELLED', exitCode: number | null) {
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        await this.client.call(FinishJobDocument, { input: { jobID, status, exitCode } });
        return;
      } catch (e) {
        if (e instanceof GatewayCallError) return; // already finished, or not ours: nothing to retry
        await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 2_000)));
      }
    }
  }

  async backgroundJob(jobID: string) {
    return this.client.call(BackgroundJobDocument, { input: { jobID } });
  }

  /** After a restart: take a LOST job back whose process this host still supervises. */
  async restoreJob(jobID: string) {
    return this.client.call(RestoreJobDocument, { input: { jobID, hostID: this.hostID() } });
  }

  /**
   * Cancels a job's process group: SIGTERM, then SIGKILL after the grace period. The exit is
   * reported as CANCELLED by the exit handler.
   */
  cancelJob(jobID: string): boolean {
    const j = this.jobs.get(jobID);
    if (!j) return false;
    this.cancelled.add(jobID);
    try { process.kill(-j.pid, 'SIGTERM'); } catch {}
    const t = setTimeout(() => { try { process.kill(-j.pid, 'SIGKILL'); } catch {} }, this.opts.killGraceMs ?? 2_000);
    t.unref();
    j.done.finally(() => clearTimeout(t));
    return true;
  }

  /** Stops renewing the lease. With `crash`, leaves processes running and reports nothing (a host crash). */
  async stop(opts: { crash?: boolean } = {}) {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    if (!opts.crash) {
      for (const id of [...this.jobs.keys()]) this.cancelJob(id);
      await Promise.all([...this.jobs.values()].map((j) => j.done));
    }
    await this.client.close();
  }
}
