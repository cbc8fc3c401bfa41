import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small OpenAI-compatible chat-completions server on 127.0.0.1 for the tests. It answers
 * deterministically and records every request (model and messages), so a test can check which model
 * was used and exactly what context reached it.
 *
 * Answer: a request whose last message is the compaction instruction gets
 * `SUMMARY<model>[ role: content | role: content ... ]` of the messages before it; any other request
 * gets `ANSWER<model>(<last message content>)`. Usage counts are word counts.
 */
export interface RecordedRequest {
  model: string;
  messages: { role: string; content: string }[];
  at: number;
}

export interface FakeLlm {
  url: string;
  requests: RecordedRequest[];
  /** Delay before each answer (ms); tests change it. */
  delayMs: number;
  /** Answer every request with this HTTP status and an error body (null: answer normally). */
  failStatus: number | null;
  /** Resolves once `n` requests have been received. */
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  close(): Promise<void>;
}

const words = (s: string) => s.split(/\s+/).filter(Boolean).length;

export function fakeAnswer(model: string, messages: { role: string; content: string }[]): string {
  const last = messages[messages.length - 1];
  if (last && /^Summarize the conversation above/.test(last.content)) {
    return `SUMMARY<${model}>[ ${messages.slice(0, -1).map((m) => `${m.role}: ${m.content}`).join(' | ')} ]`;
  }
  return `ANSWER<${model}>(${last?.content ?? ''})`;
}

export async function startFakeLlm(): Promise<FakeLlm> {
  const waiters: (() => void)[] = [];
  const fake: FakeLlm = {
    url: '',
    requests: [],
    delayMs: 0,
    failStatus: null,
    async waitForRequests(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (fake.requests.length < n) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`fake LLM: ${fake.requests.length} of ${n} requests`);
        await new Promise<void>((r) => { waiters.push(r); setTimeout(r, Math.min(left, 100)); });
      }
      return fake.requests;
    },
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const send = (status: number, obj: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(obj));
      };
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) return send(404, { error: { message: 'not found' } });
      let parsed: any;
      try { parsed = JSON.parse(body); } catch { return send(400, { error: { message: 'bad json' } }); }
      const model = String(parsed.model);
      const messages = (parsed.messages ?? []).map((m: any) => ({ role: String(m.role), content: String(m.content) }));
      fake.requests.push({ model, messages, at: Date.now() });
      waiters.splice(0).forEach((w) => w());
      const answer = () => {
        if (fake.failStatus) return send(fake.failStatus, { error: { message: 'the provider is down' } });
        const text = fakeAnswer(model, messages);
        send(200, {
          id: `chatcmpl-${fake.requests.length}`,
          object: 'chat.completion',
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
          usage: {
            prompt_tokens: messages.reduce((n: number, m: any) => n + words(m.content), 0),
            completion_tokens: words(text),
          },
        });
      };
      if (fake.delayMs > 0) setTimeout(answer, fake.delayMs); else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}/v1`;
  fake.close = () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
  return fake;
}
