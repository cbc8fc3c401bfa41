import fc from 'fast-check';
import { expect } from 'vitest';
import { GatewayClient, SealSessionDocument, type SealSessionMutation } from '../client/index.js';
import { groupRunning, ReferenceHost, type ReferenceHostOptions } from '../host/host.js';
import type { TestGateway } from './harness.js';

/** Helpers shared by the seal tests: real reference hosts, real processes, a plugin client. */

export type SealResult = SealSessionMutation['sealSession'];

export async function sealKit(g: TestGateway) {
  const hostToken = await g.token('host');
  const pluginToken = await g.token('plugin');
  const plugin = new GatewayClient({ url: g.url, token: pluginToken });
  const hosts: ReferenceHost[] = [];

  return {
    hostToken,
    pluginToken,
    hosts,
    async host(opts: Partial<ReferenceHostOptions> = {}) {
      const h = new ReferenceHost({ url: g.url, token: hostToken, leaseMs: 30_000, killGraceMs: 1_000, ...opts });
      await h.start();
      hosts.push(h);
      return h;
    },
    async session(input: { parentID?: string; directory?: string; title?: string; hostID?: string } = {}): Promise<string> {
      const r = await g.gql(`mutation($input: CreateSessionInput!) { createSession(input: $input) { __typename ... on Session { id } } }`,
        { input: { directory: input.parentID ? undefined : (input.directory ?? '/work/seal'), ...input } }, pluginToken);
      if (r.data?.createSession?.__typename !== 'Session') throw new Error(JSON.stringify(r));
      return r.data.createSession.id;
    },
    async seal(sessionID: string, timeoutMs?: number | null, client: GatewayClient = plugin): Promise<SealResult> {
      const d = await client.request(SealSessionDocument, { input: { sessionID, timeoutMs } });
      return d.sealSession;
    },
    /** Session state as a reader sees it. */
    async state(sessionID: string) {
      const r = await g.gql(`query($id: ID!) { session(id: $id) { id status sealedAt
        runningExecution { id }
        executions(first: 50) { edges { node { id status interruptReason } } }
        jobs(first: 100) { edges { node { id status background restored exitCode } } }
        messages(first: 100) { edges { node { id origin } } } } }`, { id: sessionID });
      if (r.errors) throw new Error(JSON.stringify(r.errors));
      return r.data.session;
    },
    async journal(sessionID: string): Promise<{ seq: number; type: string; payload: any }[]> {
      return (await g.sql`SELECT seq, type, payload FROM journal WHERE session_id = ${sessionID} ORDER BY seq`) as any;
    },
    async dispose() {
      for (const h of hosts) {
        // Kill whatever is left (a test that failed midway), then let go of the host.
        for (const j of h.jobs.values()) { try { process.kill(-j.pid, 'SIGKILL'); } catch {} }
        await h.stop({ crash: true }).catch(() => {});
      }
      await plugin.close();
    },
  };
}

/** True while the process exists (signal 0 probes without sending anything). */
export function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}
/** True while any process of the group can still run (terminated zombies awaiting reaping do not count). */
export function groupAlive(pgid: number): boolean {
  return groupRunning(pgid);
}

// ---- The late-admission race (seal-race*.test.ts): plans, and the fence every run must show. ----

export const ADMISSIONS = ['begin', 'prompt', 'synthetic', 'job', 'background'] as const;
export type Admission = (typeof ADMISSIONS)[number];
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const opArb = fc.record({ kind: fc.constantFrom(...ADMISSIONS), delay: fc.nat(15), background: fc.boolean() });
export const planArb = fc.record({ prelude: fc.boolean(), ops: fc.array(opArb, { minLength: 1, maxLength: 6 }), sealDelay: fc.nat(15) });

/** The journal event an admitted operation wrote, and every admission event in the journal. */
export function admissionEvents(journal: { seq: number; type: string; payload: any }[]) {
  return journal.filter((e) =>
    e.type === 'execution.started' || e.type === 'job.started' || e.type === 'job.backgrounded' ||
    (e.type === 'message.appended' && (e.payload.origin === 'PROMPT' || e.payload.origin === 'SYNTHETIC')));
}
export const eventType: Record<Admission, string> = {
  begin: 'execution.started', prompt: 'message.appended', synthetic: 'message.appended', job: 'job.started', background: 'job.backgrounded',
};

export function checkFence(journal: { seq: number; type: string; payload: any }[], admitted: { kind: Admission }[], preludeEvents: number) {
  const sealing = journal.find((e) => e.type === 'session.sealing');
  expect(sealing).toBeDefined();
  const events = admissionEvents(journal);
  // Nothing admitted after the seal's commit...
  expect(events.filter((e) => e.seq > sealing!.seq)).toEqual([]);
  // ...and every admission a caller was told succeeded is one of those before it (none unaccounted).
  for (const kind of ADMISSIONS) {
    const want = admitted.filter((a) => a.kind === kind).length;
    const got = events.filter((e) => e.type === eventType[kind] && (kind === 'prompt' ? e.payload.origin === 'PROMPT' : kind === 'synthetic' ? e.payload.origin === 'SYNTHETIC' : true)).length;
    expect(got - (kind === 'begin' || kind === 'job' ? preludeEvents : 0)).toBe(want);
  }
}
