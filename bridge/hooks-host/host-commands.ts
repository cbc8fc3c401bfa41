// The gateway's commands to a hooks-driven host (host/lease delivery: bridge/common/host-lease.ts): requests
// answered with replyHostCommand (compaction, generation), the others acknowledged; and the agent runs the host
// makes itself to answer them (hidden: their hooks answer at once, nothing of them is mirrored).
import { spawn } from 'node:child_process';
import { AcknowledgeHostCommandDocument, ReplyHostCommandDocument } from '../../client/index.js';
import type { Command } from '../common/host-lease.js';
import type { Gateway } from '../common/gateway.js';

/** Runs a request and sends its result (or its error) with replyHostCommand (not acknowledged: the reply is the answer). */
export async function replyTo(gw: Gateway, c: NonNullable<Command>, fn: () => Promise<Record<string, unknown>>, stopped: () => boolean, log: (m: string) => void) {
  let result: Record<string, unknown> | null = null;
  let error: string | null = null;
  try { result = await fn(); } catch (e: any) {
    if (stopped()) return;
    error = String(e?.message ?? e).slice(0, 2_000) || 'failed';
    log(`${c.kind} ${c.id}: ${error}`);
  }
  await gw.call(ReplyHostCommandDocument, { input: { commandID: c.id, ...(error !== null ? { error } : { result }) } as any })
    .catch((e) => log(`reply ${c.id}: ${e.message}`));
}

/** Replies to a request with an error (a PROMPT whose run could not start: the gateway answers its sender). */
export async function replyError(gw: Gateway, c: NonNullable<Command>, error: string, log: (m: string) => void) {
  await gw.call(ReplyHostCommandDocument, { input: { commandID: c.id, error: error.slice(0, 2_000) || 'failed' } })
    .catch((e) => log(`reply ${c.id}: ${e.message}`));
}

export async function acknowledge(gw: Gateway, c: NonNullable<Command>, log: (m: string) => void) {
  await gw.call(AcknowledgeHostCommandDocument, { input: { commandID: c.id } }).catch((e) => log(`acknowledge ${c.id}: ${e.message}`));
}

/** Runs an agent binary to completion with its output collected (a run of the host's own). */
export function runHidden(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, input?: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd, env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => { out += d; });
    child.stderr!.on('data', (d) => { err += d; });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, out, err }));
    if (input !== undefined) child.stdin!.end(input);
  });
}
