// The admission proxy (issue 12 item 2): serves OpenCode's whole HTTP API (SSE, v1 and v2 APIs, PTY
// WebSocket) on the public port, in front of an `opencode serve` that listens on a private loopback port
// behind a password only this process knows. Every request that can start or change work in a session
// is admitted by the gateway first (admitWork: the session lock and seal check of beginExecution), so
// the gateway is OpenCode's admission authority and a seal can be proven (`sealSession` → SessionSealed).
//
// The policy (`policyOf`):
// - reads (GET, HEAD) and WebSocket upgrades (PTY) pass; OPTIONS (CORS preflight) passes without auth;
// - stopping work passes without admission: POST /session/{id}/abort, POST /api/session/{id}/interrupt,
//   DELETE /session/{id};
// - any other request (known or not) that names an OpenCode session, in its path, its query or its body
//   (e.g. the events of /sync/replay), is admitted for every session it names: refused with 409
//   SessionSealedError from the seal's first commit on. Permission and question replies name their
//   request only: the proxy looks the session up in OpenCode's pending list first;
// - a request naming no session (create a session, PTYs, config) passes.
// A session named in the path that OpenCode does not know answers 404; one named in the body that OpenCode
// does not know is not an OpenCode session (nothing can run in it) and is ignored.
import http from 'node:http';
import net from 'node:net';
import { createHash, timingSafeEqual } from 'node:crypto';

export type AdmitAnswer =
  | { ok: true }
  | { ok: false; status: number; name: string; message: string; data?: Record<string, unknown> };

export interface ProxyOptions {
  /** The private OpenCode server, e.g. http://127.0.0.1:N. */
  upstream: string;
  /** OpenCode's password (OPENCODE_SERVER_PASSWORD of the private server). */
  upstreamPassword: string;
  /** What OpenCode's clients must send (HTTP basic auth, user `username`). */
  password: string;
  username?: string;
  /** Asks the gateway whether work in this OpenCode session may be forwarded now. */
  admit: (ocSessionID: string, route: string) => Promise<AdmitAnswer>;
  /** Whether OpenCode knows the session (for a 404 instead of a refusal). */
  exists: (ocSessionID: string) => Promise<boolean>;
  host?: string;
  port?: number;
  /** The largest request body forwarded (default 32 MiB): larger ones answer 413. */
  maxBodyBytes?: number;
  log?: (m: string) => void;
}

export type Policy = 'read' | 'stop' | 'admit' | 'preflight';

const SESSION_ID = /^ses_[0-9A-Za-z]{6,64}$/;
const SESSION_IN_TEXT = /\bses_[0-9A-Za-z]{6,64}\b/g;
const MAX_SESSIONS_PER_REQUEST = 64;

/** What the proxy does with a request, from its method and path alone (pure; unit-tested). */
export function policyOf(method: string, pathname: string): Policy {
  const m = method.toUpperCase();
  if (m === 'OPTIONS') return 'preflight';
  if (m === 'GET' || m === 'HEAD') return 'read';
  const seg = pathname.split('/').filter(Boolean);
  if (m === 'POST' && seg.length === 3 && seg[0] === 'session' && seg[2] === 'abort') return 'stop';
  if (m === 'POST' && seg.length === 4 && seg[0] === 'api' && seg[1] === 'session' && seg[3] === 'interrupt') return 'stop';
  if (m === 'DELETE' && seg.length === 2 && seg[0] === 'session') return 'stop';
  return 'admit';
}

/** The OpenCode session IDs a request names: path segments, query values, and its body text. */
export function sessionsNamed(pathname: string, search: URLSearchParams, body: string): { path: string[]; other: string[] } {
  const pathIDs = pathname.split('/').filter((s) => SESSION_ID.test(s));
  const other = new Set<string>();
  for (const v of search.values()) for (const id of v.match(SESSION_IN_TEXT) ?? []) other.add(id);
  for (const id of body.match(SESSION_IN_TEXT) ?? []) other.add(id);
  for (const id of pathIDs) other.delete(id);
  return { path: [...new Set(pathIDs)], other: [...other] };
}

/** A route with its IDs generalised, for the admission record: `POST /session/{id}/prompt_async`. */
export function routeOf(method: string, pathname: string): string {
  return `${method.toUpperCase()} ${pathname.split('/').map((s) => (/^[a-z]{3}_[0-9A-Za-z]{6,}$/.test(s) ? '{id}' : s)).join('/')}`.slice(0, 500);
}

const HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'authorization']);

function digest(s: string) { return createHash('sha256').update(s).digest(); }

export class OpencodeProxy {
  private server: http.Server | null = null;
  private readonly upstream: URL;
  private readonly upstreamAuth: string;
  private readonly max: number;
  private readonly log: (m: string) => void;
  /** Sessions being quiesced for a seal: refused here at once, whatever the gateway would say. */
  private readonly closing = new Set<string>();
  /** Admitted requests forwarded and not answered yet, per OpenCode session. */
  private readonly inflight = new Map<string, number>();
  private readonly inflightWaiters = new Map<string, (() => void)[]>();
  private readonly sockets = new Set<net.Socket>();
  readonly stats = { admitted: 0, refused: 0, forwarded: 0, unauthorized: 0 };
  url = '';

  constructor(private readonly o: ProxyOptions) {
    this.upstream = new URL(o.upstream);
    this.upstreamAuth = `Basic ${Buffer.from(`opencode:${o.upstreamPassword}`).toString('base64')}`;
    this.max = o.maxBodyBytes ?? 32 * 1024 * 1024;
    this.log = o.log ?? (() => {});
  }

  async start(): Promise<string> {
    const server = http.createServer((req, res) => void this.onRequest(req, res).catch((e) => {
      this.log(`proxy ${req.method} ${req.url}: ${e?.message ?? e}`);
      if (!res.headersSent) this.fail(res, 502, 'ProxyError', 'The OpenCode server behind the gateway proxy did not answer.');
      else res.destroy();
    }));
    server.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket as net.Socket, head));
    server.on('connection', (s) => { this.sockets.add(s); s.once('close', () => this.sockets.delete(s)); });
    server.requestTimeout = 0; // SSE streams and long prompts
    server.headersTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port ?? 0, this.o.host ?? '127.0.0.1', () => resolve());
    });
    this.server = server;
    const a = server.address() as net.AddressInfo;
    this.url = `http://${a.address}:${a.port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    const closed = new Promise<void>((r) => s.close(() => r()));
    for (const sock of this.sockets) sock.destroy();
    await closed;
  }

  /**
   * For a seal (CLOSE_ADMISSIONS): from now on nothing more is forwarded for the session; resolves when
   * every request already forwarded for it has been answered by OpenCode, calling `abort` (OpenCode's
   * session abort) while some are still running (a v1 prompt answers only when its turn ends).
   */
  async quiesce(ocSessionID: string, abort: () => Promise<unknown>, timeoutMs = 60_000): Promise<boolean> {
    this.closing.add(ocSessionID);
    const deadline = Date.now() + timeoutMs;
    while ((this.inflight.get(ocSessionID) ?? 0) > 0) {
      if (Date.now() > deadline) return false;
      await abort().catch(() => {});
      await new Promise<void>((r) => {
        const list = this.inflightWaiters.get(ocSessionID) ?? [];
        list.push(r);
        this.inflightWaiters.set(ocSessionID, list);
        setTimeout(r, 1_000).unref(); // abort again if a request is still running a second later
      });
    }
    return true;
  }

  /** Forgets a session quiesced earlier (the gateway's admission decides again; tests). */
  reopen(ocSessionID: string) { this.closing.delete(ocSessionID); }

  private authorized(req: http.IncomingMessage): boolean {
    const h = req.headers.authorization ?? '';
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(h);
    if (!m) return false;
    const text = Buffer.from(m[1], 'base64').toString('utf8');
    const i = text.indexOf(':');
    if (i < 0) return false;
    const user = text.slice(0, i);
    const pass = text.slice(i + 1);
    return timingSafeEqual(digest(pass), digest(this.o.password)) && user === (this.o.username ?? 'opencode');
  }

  private fail(res: http.ServerResponse, status: number, name: string, message: string, data: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    if (res.headersSent) { res.destroy(); return; }
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ name, data: { message, ...data } }));
  }

  private async onRequest(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const policy = policyOf(req.method ?? 'GET', url.pathname);
    if (policy !== 'preflight' && !this.authorized(req)) {
      this.stats.unauthorized++;
      req.resume();
      return this.fail(res, 401, 'UnauthorizedError',
        req.headers.authorization ? 'Wrong OpenCode password for the gateway proxy.' : 'The gateway proxy needs HTTP basic auth (user "opencode", the proxy password; OPENCODE_SERVER_PASSWORD for OpenCode\'s clients).',
        {}, { 'www-authenticate': 'Basic realm="opencode gateway proxy"' });
    }
    if (policy === 'read' || policy === 'preflight' || policy === 'stop') return this.forward(req, res, url, null, []);

    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > this.max) {
      req.resume();
      return this.fail(res, 413, 'PayloadTooLargeError', `The request body (${declared} bytes) is larger than the gateway proxy forwards (${this.max} bytes).`, { limit: this.max });
    }
    const body = await this.readBody(req);
    if (body === null) return this.fail(res, 413, 'PayloadTooLargeError', `The request body is larger than the gateway proxy forwards (${this.max} bytes).`, { limit: this.max });

    const named = sessionsNamed(url.pathname, url.searchParams, body.length <= 4 * 1024 * 1024 ? body.toString('utf8') : body.subarray(0, 4 * 1024 * 1024).toString('utf8'));
    const segs = url.pathname.split('/').filter(Boolean);
    // Replies to a pending permission or question name the request, not the session.
    if (!named.path.length && segs.length === 3 && (segs[0] === 'permission' || segs[0] === 'question')) {
      const owner = await this.pendingOwner(segs[0], segs[1]);
      if (owner) named.other.push(owner);
    }
    if (named.path.length + named.other.length > MAX_SESSIONS_PER_REQUEST) {
      return this.fail(res, 400, 'BadRequestError', `The request names more than ${MAX_SESSIONS_PER_REQUEST} sessions.`);
    }
    const route = routeOf(req.method ?? 'POST', url.pathname);
    const admitted: string[] = [];
    for (const [id, inPath] of [...named.path.map((s) => [s, true] as const), ...named.other.map((s) => [s, false] as const)]) {
      if (this.closing.has(id)) {
        this.stats.refused++;
        return this.fail(res, 409, 'SessionSealedError', `Session ${id} is sealed by the gateway: it admits no new work.`, { sessionID: id });
      }
      if (!(await this.o.exists(id))) {
        if (inPath) return this.fail(res, 404, 'NotFoundError', `Session not found: ${id}`, { sessionID: id });
        continue; // not an OpenCode session: nothing can run in it
      }
      const a = await this.o.admit(id, route);
      if (!a.ok) {
        this.stats.refused++;
        return this.fail(res, a.status, a.name, a.message, { sessionID: id, ...(a.data ?? {}) });
      }
      admitted.push(id);
    }
    // A quiesce may have begun while the gateway answered (the seal committed after this admission):
    // then it may already have found nothing in flight, so this request must not go out. The check and
    // the count below run in one tick: a quiesce that begins later waits for this request.
    const closed = admitted.find((id) => this.closing.has(id));
    if (closed) {
      this.stats.refused++;
      return this.fail(res, 409, 'SessionSealedError', `Session ${closed} is sealed by the gateway: it admits no new work.`, { sessionID: closed });
    }
    for (const id of admitted) this.inflight.set(id, (this.inflight.get(id) ?? 0) + 1);
    this.stats.admitted += admitted.length ? 1 : 0;
    try {
      await this.forward(req, res, url, body, admitted);
    } finally {
      for (const id of admitted) {
        const n = (this.inflight.get(id) ?? 1) - 1;
        if (n <= 0) this.inflight.delete(id); else this.inflight.set(id, n);
        for (const w of this.inflightWaiters.get(id)?.splice(0) ?? []) w();
      }
    }
  }

  private readBody(req: http.IncomingMessage): Promise<Buffer | null> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let over = false;
      req.on('data', (c: Buffer) => {
        if (over) return;
        size += c.length;
        if (size > this.max) { over = true; chunks.length = 0; resolve(null); req.resume(); return; }
        chunks.push(c);
      });
      req.on('end', () => { if (!over) resolve(Buffer.concat(chunks)); });
      req.on('error', reject);
    });
  }

  private async pendingOwner(kind: 'permission' | 'question', requestID: string): Promise<string | null> {
    try {
      const r = await fetch(new URL(`/${kind}`, this.upstream), { headers: { authorization: this.upstreamAuth }, signal: AbortSignal.timeout(10_000) });
      const list: any[] = r.ok ? await r.json() : [];
      return list.find((p) => p?.id === requestID)?.sessionID ?? null;
    } catch { return null; }
  }

  private headersFor(req: http.IncomingMessage, body: Buffer | null): http.OutgoingHttpHeaders {
    const h: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && v !== undefined) h[k] = v;
    h.host = this.upstream.host;
    h.authorization = this.upstreamAuth;
    if (body) { h['content-length'] = String(body.length); delete h['transfer-encoding']; }
    return h;
  }

  /** Forwards one request (streamed both ways: SSE stays a stream); resolves when the response has ended. */
  private forward(req: http.IncomingMessage, res: http.ServerResponse, url: URL, body: Buffer | null, sessions: string[]): Promise<void> {
    this.stats.forwarded++;
    return new Promise<void>((resolve) => {
      const up = http.request({
        host: this.upstream.hostname, port: this.upstream.port, method: req.method, path: url.pathname + url.search,
        headers: this.headersFor(req, body),
      }, (ur) => {
        const headers = { ...ur.headers };
        delete headers.connection;
        delete headers['keep-alive'];
        res.writeHead(ur.statusCode ?? 502, headers);
        res.flushHeaders();
        ur.pipe(res);
        ur.on('error', () => res.destroy());
        ur.on('end', () => resolve());
        ur.on('close', () => resolve());
      });
      up.on('error', (e) => {
        this.log(`upstream ${req.method} ${url.pathname}${sessions.length ? ` (${sessions.join(',')})` : ''}: ${e.message}`);
        this.fail(res, 502, 'ProxyError', 'The OpenCode server behind the gateway proxy is not reachable.');
        resolve();
      });
      res.on('close', () => { up.destroy(); resolve(); }); // the client went away (e.g. an SSE reader)
      if (body) up.end(body);
      else req.pipe(up);
    });
  }

  /** WebSocket (PTY connect): authenticated here, then a raw tunnel to OpenCode with its password. */
  private onUpgrade(req: http.IncomingMessage, socket: net.Socket, head: Buffer) {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    if (!this.authorized(req)) {
      this.stats.unauthorized++;
      socket.end('HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm="opencode gateway proxy"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    if ((req.method ?? 'GET').toUpperCase() !== 'GET') {
      socket.end('HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    const up = net.connect(Number(this.upstream.port), this.upstream.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`, `host: ${this.upstream.host}`, `authorization: ${this.upstreamAuth}`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const k = req.rawHeaders[i];
        if (['host', 'authorization'].includes(k.toLowerCase())) continue;
        lines.push(`${k}: ${req.rawHeaders[i + 1]}`);
      }
      up.write(lines.join('\r\n') + '\r\n\r\n');
      if (head.length) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    this.sockets.add(up);
    up.once('close', () => { this.sockets.delete(up); socket.destroy(); });
    up.on('error', () => socket.destroy());
    socket.on('error', () => up.destroy());
    socket.once('close', () => up.destroy());
  }
}
