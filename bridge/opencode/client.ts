// A small HTTP/SSE client for the parts of OpenCode's server API the bridge uses (see NOTES.md).

export interface OcSession {
  id: string;
  parentID?: string;
  directory: string;
  projectID?: string;
  title?: string;
  time?: { created: number; updated: number };
}

export interface OcMessageInfo {
  id: string;
  sessionID: string;
  role: 'user' | 'assistant';
  parentID?: string;
  time: { created: number; completed?: number };
  error?: { name: string; data?: { message?: string } };
  finish?: string;
  /** Assistant messages: the model, agent and mode of the step, and its usage. */
  providerID?: string;
  modelID?: string;
  mode?: string;
  agent?: string;
  cost?: number;
  tokens?: OcTokens;
  /** The summary message of a compaction (OpenCode's summarize). */
  summary?: boolean;
}

export interface OcTokens { input?: number; output?: number; reasoning?: number; cache?: { read?: number; write?: number } }

export interface OcPart {
  id: string;
  sessionID: string;
  messageID: string;
  type: string; // text | tool | file | reasoning | step-start | step-finish | patch | ...
  text?: string;
  synthetic?: boolean;
  tool?: string;
  callID?: string;
  state?: {
    status: 'pending' | 'running' | 'completed' | 'error';
    input?: Record<string, unknown>;
    output?: string;
    error?: string;
    title?: string;
    metadata?: Record<string, unknown>;
    time?: { start?: number; end?: number };
  };
  time?: { start?: number; end?: number };
  cost?: number;
  tokens?: OcTokens;
  snapshot?: string;
  reason?: string;
  mime?: string;
  filename?: string;
  url?: string;
  hash?: string;
  files?: string[];
}

/** One durable event of a session's history (`POST /sync/history` or a `sync` global event). */
export interface OcSyncEvent {
  id: string;
  sessionID: string;
  seq: number;
  type: string; // e.g. message.part.updated.1
  data: any;
}

export type OcStatus = { type: 'idle' | 'busy' | 'retry' };

export type OcLiveEvent =
  | { kind: 'sync'; event: OcSyncEvent }
  | { kind: 'status'; sessionID: string; status: OcStatus }
  | { kind: 'connected' };

export class OpencodeError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export class OpencodeClient {
  readonly base: string;
  constructor(url: string, private readonly auth?: { username?: string; password: string }) {
    this.base = url.replace(/\/+$/, '');
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { ...extra };
    if (this.auth) h.authorization = `Basic ${Buffer.from(`${this.auth.username ?? 'opencode'}:${this.auth.password}`).toString('base64')}`;
    return h;
  }

  private async req<T>(method: string, path: string, body?: unknown): Promise<T> {
    // OpenCode never answers a connection it accepted while starting (right after a restart): a short
    // wait for the response headers, a longer one for the whole (possibly large) body.
    const headers = new AbortController();
    const t = setTimeout(() => headers.abort(new Error(`OpenCode ${method} ${path}: no response`)), 10_000);
    let res: Response;
    try {
      res = await fetch(this.base + path, {
        method,
        headers: this.headers(body === undefined ? {} : { 'content-type': 'application/json' }),
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.any([headers.signal, AbortSignal.timeout(60_000)]),
      });
    } finally {
      clearTimeout(t);
    }
    const text = await res.text();
    if (!res.ok) throw new OpencodeError(res.status, `OpenCode ${method} ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  health() { return this.req<{ healthy: boolean; version: string }>('GET', '/global/health'); }
  listSessions() { return this.req<OcSession[]>('GET', '/session'); }
  getSession(id: string) { return this.req<OcSession>('GET', `/session/${encodeURIComponent(id)}`); }
  /** The sessions whose parent is `id` (`GET /session/{id}/children`). */
  children(id: string) { return this.req<OcSession[]>('GET', `/session/${encodeURIComponent(id)}/children`); }
  createSession(input: { title?: string; parentID?: string } = {}) { return this.req<OcSession>('POST', '/session', input); }
  updateSession(id: string, input: { title?: string }) { return this.req<OcSession>('PATCH', `/session/${encodeURIComponent(id)}`, input); }
  deleteSession(id: string) { return this.req<boolean>('DELETE', `/session/${encodeURIComponent(id)}`); }
  /** OpenCode's own compaction: summarizes the session's history with the model (answers when done). */
  summarize(id: string, model: { providerID: string; modelID: string }) {
    return this.req<boolean>('POST', `/session/${encodeURIComponent(id)}/summarize`, { ...model, auto: false });
  }
  /** A prompt answered synchronously (`POST /session/{id}/message`): the assistant message and its parts. */
  prompt(id: string, body: { parts: { type: 'text'; text: string }[]; model?: { providerID: string; modelID: string }; tools?: Record<string, boolean>; system?: string }) {
    return this.req<{ info: OcMessageInfo; parts: OcPart[] }>('POST', `/session/${encodeURIComponent(id)}/message`, body);
  }
  /** The models of OpenCode's configured providers, and its default model per provider. */
  providers() {
    return this.req<{ providers: { id: string; models: Record<string, { id: string }> }[]; default: Record<string, string> }>('GET', '/config/providers');
  }
  config() { return this.req<{ model?: string; small_model?: string }>('GET', '/config'); }
  toolIDs() { return this.req<string[]>('GET', '/experimental/tool/ids'); }
  status() { return this.req<Record<string, OcStatus>>('GET', '/session/status'); }
  abort(id: string) { return this.req<boolean>('POST', `/session/${encodeURIComponent(id)}/abort`); }
  messages(id: string) { return this.req<{ info: OcMessageInfo; parts: OcPart[] }[]>('GET', `/session/${encodeURIComponent(id)}/message`); }
  diff(id: string, messageID: string) {
    return this.req<{ file: string; patch?: string; additions: number; deletions: number; status?: string }[]>(
      'GET', `/session/${encodeURIComponent(id)}/diff?messageID=${encodeURIComponent(messageID)}`);
  }
  promptAsync(id: string, text: string, model?: { providerID: string; modelID: string }) {
    return this.req<void>('POST', `/session/${encodeURIComponent(id)}/prompt_async`, { parts: [{ type: 'text', text }], ...(model ? { model } : {}) });
  }
  updatePart(part: OcPart) {
    return this.req<OcPart>('PATCH',
      `/session/${encodeURIComponent(part.sessionID)}/message/${encodeURIComponent(part.messageID)}/part/${encodeURIComponent(part.id)}`, part);
  }
  deleteMessage(sessionID: string, messageID: string) {
    return this.req<boolean>('DELETE', `/session/${encodeURIComponent(sessionID)}/message/${encodeURIComponent(messageID)}`);
  }

  /** Durable history: events with seq > cursors[sessionID]; sessions not named get their whole history. */
  async history(cursors: Record<string, number>): Promise<OcSyncEvent[]> {
    const rows = await this.req<{ id: string; aggregate_id: string; seq: number; type: string; data: any }[]>('POST', '/sync/history', cursors);
    return rows.map((r) => ({ id: r.id, sessionID: r.aggregate_id, seq: r.seq, type: r.type, data: r.data }));
  }

  /**
   * Follows `GET /global/event` until `signal` aborts or the stream ends (resolves) or fails (rejects).
   * The caller reconnects; every (re)connection reports `connected` first.
   */
  async follow(onEvent: (e: OcLiveEvent) => void | Promise<void>, signal: AbortSignal, opts: { silenceMs?: number; connectMs?: number } = {}): Promise<void> {
    // OpenCode sends server.heartbeat events; a stream silent for longer than silenceMs is dropped
    // (and the caller reconnects, which backfills from history), so a stuck connection loses nothing.
    const local = new AbortController();
    const onAbort = () => local.abort();
    signal.addEventListener('abort', onAbort);
    let timer: NodeJS.Timeout | null = null;
    const arm = (ms = opts.silenceMs ?? 45_000, why = 'event stream silent') => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => local.abort(new Error(why)), ms);
      timer.unref();
    };
    try {
    // A connection OpenCode accepts while it is still starting (right after a restart) is never answered:
    // give up on the response headers soon and connect again.
    arm(opts.connectMs ?? 5_000, 'event stream: no response');
    const res = await fetch(this.base + '/global/event', { headers: this.headers({ accept: 'text/event-stream' }), signal: local.signal });
    if (!res.ok || !res.body) throw new OpencodeError(res.status, `OpenCode GET /global/event: HTTP ${res.status}`);
    arm();
    await onEvent({ kind: 'connected' });
    const decoder = new TextDecoder();
    let buf = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      arm();
      buf += decoder.decode(chunk, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
        if (!data) continue;
        let msg: any;
        try { msg = JSON.parse(data); } catch { continue; }
        const p = msg?.payload;
        if (!p) continue;
        if (p.type === 'sync' && p.syncEvent) {
          const s = p.syncEvent;
          await onEvent({ kind: 'sync', event: { id: s.id, sessionID: s.aggregateID, seq: s.seq, type: s.type, data: s.data } });
        } else if (p.type === 'session.status' && p.properties?.sessionID) {
          await onEvent({ kind: 'status', sessionID: p.properties.sessionID, status: p.properties.status });
        } else if (p.type === 'session.idle' && p.properties?.sessionID) {
          await onEvent({ kind: 'status', sessionID: p.properties.sessionID, status: { type: 'idle' } });
        }
      }
    }
    } finally {
      if (timer) clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }
}
