/**
 * The reference host's model client: any OpenAI-compatible chat-completions endpoint
 * (POST {baseURL}/chat/completions, non-streaming). Used to summarize a session's context for
 * compactSession and to run generate's hidden completions.
 */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface LlmEndpoint {
  /** e.g. https://api.openai.com/v1 or http://127.0.0.1:1234/v1 (without /chat/completions). */
  baseURL: string;
  apiKey?: string;
}

export interface LlmOptions extends LlmEndpoint {
  /** Endpoints per providerID; providers not listed use baseURL/apiKey. */
  providers?: Record<string, LlmEndpoint>;
  /** Per request (default 60000). */
  timeoutMs?: number;
  maxTokens?: number;
}

export interface Completion {
  text: string;
  /** The model the endpoint says answered (may carry a version suffix); the host reports the one asked. */
  model: string;
  inputTokens: number;
  outputTokens: number;
}

export class LlmError extends Error {}

/** The instruction appended after the context when the host is asked to compact a session. */
export const COMPACTION_INSTRUCTION =
  'Summarize the conversation above so that it can replace it as the context of the next request: keep the goals, ' +
  'decisions, facts, file names and open tasks; drop chatter. Answer with the summary only.';

export class ChatCompletionsClient {
  constructor(readonly opts: LlmOptions) {}

  private endpoint(providerID: string): LlmEndpoint {
    return this.opts.providers?.[providerID] ?? this.opts;
  }

  async complete(model: { providerID: string; modelID: string }, messages: ChatMessage[]): Promise<Completion> {
    const ep = this.endpoint(model.providerID);
    const url = ep.baseURL.replace(/\/+$/, '') + '/chat/completions';
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(ep.apiKey ? { authorization: `Bearer ${ep.apiKey}` } : {}) },
      body: JSON.stringify({
        model: model.modelID,
        messages,
        stream: false,
        ...(this.opts.maxTokens ? { max_tokens: this.opts.maxTokens } : {}),
      }),
      signal: AbortSignal.timeout(this.opts.timeoutMs ?? 60_000),
    }).catch((e) => { throw new LlmError(`model endpoint unreachable: ${e?.message ?? e}`); });
    const body: any = await res.json().catch(() => null);
    if (!res.ok) throw new LlmError(`model endpoint answered ${res.status}: ${body?.error?.message ?? 'no detail'}`);
    const text = body?.choices?.[0]?.message?.content;
    if (typeof text !== 'string') throw new LlmError('model endpoint answered without choices[0].message.content');
    return {
      text,
      model: typeof body.model === 'string' ? body.model : model.modelID,
      inputTokens: Number.isInteger(body.usage?.prompt_tokens) ? body.usage.prompt_tokens : 0,
      outputTokens: Number.isInteger(body.usage?.completion_tokens) ? body.usage.completion_tokens : 0,
    };
  }
}

/** Session.context (gateway roles) as chat messages. */
export function contextMessages(context: { role: string; text: string }[]): ChatMessage[] {
  return context.map((m) => ({
    role: m.role === 'ASSISTANT' ? 'assistant' : m.role === 'SYSTEM' ? 'system' : 'user',
    content: m.text,
  }));
}
