import {
  AppendMessageDocument, CompactSessionDocument, CorrectMessagePartDocument, GatewayClient, GenerateDocument,
  RetractMessageDocument, type CompactSessionMutation, type GenerateMutation,
} from '../../client/index.js';
import { ReferenceHost, type ReferenceHostOptions } from '../../host/host.js';
import type { TestGateway } from '../harness.js';
import { startFakeLlm, type FakeLlm } from './fake-llm.js';

/** Shared by test/compaction.test.ts and test/generation.test.ts. */
export const BIG = { providerID: 'fake', modelID: 'big-model' };
export const CHEAP = { providerID: 'fake', modelID: 'cheap-model' };

export async function requestsKit(g: TestGateway) {
  const llm: FakeLlm = await startFakeLlm();
  const hostToken = await g.token('host');
  const pluginToken = await g.token('plugin');
  const plugin = new GatewayClient({ url: g.url, token: pluginToken });
  const hosts: ReferenceHost[] = [];
  const kit = {
    llm,
    hostToken,
    pluginToken,
    plugin,
    async host(opts: Partial<ReferenceHostOptions> = {}) {
      const h = new ReferenceHost({
        url: g.url, token: hostToken, leaseMs: 30_000,
        capabilities: { cancel: true, compact: true, generate: true },
        models: [BIG, CHEAP], compactionModel: BIG, llm: { baseURL: llm.url },
        ...opts,
      });
      await h.start();
      hosts.push(h);
      return h;
    },
    /** A session owned by `host` (it ran one execution) with the given user/assistant texts. */
    async session(host: ReferenceHost, texts: string[] = ['first question', 'first answer', 'second question']) {
      const r = await g.gql(`mutation($input: CreateSessionInput!) { createSession(input: $input) { __typename ... on Session { id } } }`,
        { input: { directory: '/work/requests' } }, pluginToken);
      const sessionID = r.data.createSession.id as string;
      const e: any = await host.beginExecution(sessionID);
      const messages: { id: string; partID: string }[] = [];
      for (const [i, text] of texts.entries()) {
        const m: any = await host.appendText(sessionID, e.id, text, i % 2 === 0 ? 'PROMPT' : 'MODEL');
        messages.push({ id: m.id, partID: m.parts[0].id });
      }
      await host.settleExecution(e.id, 'SUCCEEDED');
      return { sessionID, messages };
    },
    async compact(sessionID: string, timeoutMs?: number | null, client = plugin): Promise<CompactSessionMutation['compactSession']> {
      return (await client.request(CompactSessionDocument, { input: { sessionID, timeoutMs } })).compactSession;
    },
    async generate(sessionID: string, prompt: string, model = CHEAP, timeoutMs?: number | null, client = plugin): Promise<GenerateMutation['generate']> {
      return (await client.request(GenerateDocument, { input: { sessionID, prompt, model, timeoutMs } })).generate;
    },
    async correct(messageID: string, partID: string, text: string) {
      return plugin.call(CorrectMessagePartDocument, { input: { messageID, partID, text } });
    },
    async retract(messageID: string, reason = 'mistake') {
      return plugin.call(RetractMessageDocument, { input: { messageID, reason } });
    },
    async appendPrompt(host: ReferenceHost, sessionID: string, text: string) {
      return host.client.call(AppendMessageDocument, { input: { sessionID, role: 'USER', origin: 'PROMPT', parts: [{ type: 'TEXT', text }] } });
    },
    async context(sessionID: string): Promise<{ messageID: string; role: string; text: string }[]> {
      const r = await g.gql(`query($id: ID!) { session(id: $id) { context { messageID role text } } }`, { id: sessionID });
      if (r.errors) throw new Error(JSON.stringify(r.errors));
      return r.data.session.context;
    },
    async journal(sessionID: string): Promise<{ seq: number; type: string; payload: any }[]> {
      return (await g.sql`SELECT seq::int, type, payload FROM journal WHERE session_id = ${sessionID} ORDER BY seq`) as any;
    },
    async counts(sessionID: string) {
      const [r] = await g.sql`SELECT
        (SELECT count(*) FROM messages WHERE session_id = ${sessionID})::int AS messages,
        (SELECT count(*) FROM journal WHERE session_id = ${sessionID})::int AS journal,
        (SELECT count(*) FROM compactions WHERE session_id = ${sessionID})::int AS compactions,
        (SELECT count(*) FROM host_commands WHERE session_id = ${sessionID})::int AS commands`;
      return r;
    },
    async waitFor<T>(fn: () => T | undefined | null | false, timeoutMs = 10_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const v = fn();
        if (v) return v;
        if (Date.now() > deadline) throw new Error('waitFor: timed out');
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async dispose() {
      for (const h of hosts) await h.stop({ crash: true }).catch(() => {});
      await plugin.close();
      await llm.close();
    },
  };
  return kit;
}
