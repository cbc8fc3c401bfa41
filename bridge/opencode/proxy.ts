// The admission proxy: serves OpenCode's whole HTTP API (SSE, v1 and v2 APIs, PTY WebSocket) on the
// public port, in front of an `opencode serve` that listens on a private loopback port behind a password
// only this process knows. Every request that can start or change work in a session is admitted by the
// gateway first (admitWork: the session lock and seal check of beginExecution), so the gateway is
// OpenCode's admission authority and a seal can be proven (`sealSession` → SessionSealed).
//
// Each request is read once, by request-reading.ts (the canonical reading, or a refusal where OpenCode
// could read it differently), and what was read is what is forwarded. The policy:
// - reads (GET, HEAD) pass; OPTIONS (a CORS preflight, which browsers send without credentials) passes
//   without auth, and so goes to OpenCode without OpenCode's password either: it reaches OpenCode as an
//   anonymous request would (1.18.33 answers every OPTIONS with its CORS headers, whatever the path);
// - stopping work, in its exact spelling, passes without admission: POST /session/{id}/abort,
//   POST /api/session/{id}/interrupt, DELETE /session/{id};
// - any other request (known route or not) and every WebSocket upgrade is admitted for every session it
//   names (path, query, OpenCode's headers, JSON body: e.g. the events of /sync/replay): refused with 409
//   SessionSealedError from the seal's first commit on. Permission and question replies name their
//   request only: the proxy looks the session up in OpenCode's pending list first;
// - a request naming no session (create a session, PTYs, config) passes.
// A session named in the path that OpenCode does not know answers 404; one named elsewhere that OpenCode
// does not know is not an OpenCode session (nothing can run in it) and is ignored.
import http from 'node:http';
import net from 'node:net';
import { createHash, timingSafeEqual } from 'node:crypto';
import { readJsonBody, readTarget, sessionsNamed, type Refusal, type SessionsNamed, type Target } from './request-reading.js';

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
  /** Sees every request forwarded to OpenCode, with the sessions it was admitted for (tests, logs). */
  onForward?: (f: { method: string; target: string; sessions: string[] }) => void;
  /** The largest request body forwarded (default 32 MiB): larger ones answer 413. */
  maxBodyBytes?: number;
  log?: (m: string) => void;
}

const MAX_SESSIONS_PER_REQUEST = 64;

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
  /** WebSocket tunnels admitted for a session (none of OpenCode's 1.18.33 WebSocket routes names one). */
  private readonly openTunnels = new Map<string, Set<net.Socket>>();
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
    server.on('upgrade', (req, socket, head) => void this.onUpgrade(req, socket as net.Socket, head).catch((e) => {
      this.log(`proxy upgrade ${req.url}: ${e?.message ?? e}`);
      socket.destroy();
    }));
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
    for (const s of this.openTunnels.get(ocSessionID) ?? []) s.destroy();
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
    const method = req.method ?? 'GET';
    const target = readTarget(method, req.url ?? '/');
    if ((target.refused || target.policy !== 'preflight') && !this.authorized(req)) {
      this.stats.unauthorized++;
      req.resume();
      return this.fail(res, 401, 'UnauthorizedError',
        req.headers.authorization ? 'Wrong OpenCode password for the gateway proxy.' : 'The gateway proxy needs HTTP basic auth (user "opencode", the proxy password; OPENCODE_SERVER_PASSWORD for OpenCode\'s clients).',
        {}, { 'www-authenticate': 'Basic realm="opencode gateway proxy"' });
    }
    if (target.refused) { req.resume(); return this.refuse(res, target); }
    if (target.policy !== 'admit') return this.forward(req, res, target, null, [], target.policy !== 'preflight');

    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > this.max) {
      req.resume();
      return this.fail(res, 413, 'PayloadTooLargeError', `The request body (${declared} bytes) is larger than the gateway proxy forwards (${this.max} bytes).`, { limit: this.max });
    }
    const raw = await this.readBody(req);
    if (raw === null) return this.fail(res, 413, 'PayloadTooLargeError', `The request body is larger than the gateway proxy forwards (${this.max} bytes).`, { limit: this.max });
    const body = readJsonBody(req.headers, raw);
    if (body.refused) return this.refuse(res, body);

    const named = sessionsNamed(target, req.headers, body.value);
    const seg = target.segments;
    // Replies to a pending permission or question name the request, not the session.
    if (!named.path.length && seg.length === 3 && (seg[0] === 'permission' || seg[0] === 'question')) {
      const owner = await this.pendingOwner(seg[0], seg[1]);
      if (owner) named.other.push(owner);
    }
    const admitted = await this.admitAll(named, target.route);
    if ('refused' in admitted) return this.refuse(res, admitted);
    for (const id of admitted) this.inflight.set(id, (this.inflight.get(id) ?? 0) + 1);
    this.stats.admitted += admitted.length ? 1 : 0;
    try {
      await this.forward(req, res, target, body.bytes, admitted, true);
    } finally {
      for (const id of admitted) this.settle(id);
    }
  }

  /**
   * Admits the request for every session it names, or answers why not. When it answers the IDs, they are
   * not closing: the check and the caller's inflight count run in one tick, so a quiesce that begins later
   * waits for the request.
   */
  private async admitAll(named: SessionsNamed, route: string): Promise<string[] | (Refusal & { data?: Record<string, unknown> })> {
    if (named.path.length + named.other.length > MAX_SESSIONS_PER_REQUEST) {
      return { refused: true, status: 400, name: 'BadRequestError', message: `The request names more than ${MAX_SESSIONS_PER_REQUEST} sessions.` };
    }
    const sealed = (id: string) => {
      this.stats.refused++;
      return { refused: true as const, status: 409, name: 'SessionSealedError', message: `Session ${id} is sealed by the gateway: it admits no new work.`, data: { sessionID: id } };
    };
    const admitted: string[] = [];
    for (const [id, inPath] of [...named.path.map((s) => [s, true] as const), ...named.other.map((s) => [s, false] as const)]) {
      if (this.closing.has(id)) return sealed(id);
      if (!(await this.o.exists(id))) {
        if (inPath) return { refused: true, status: 404, name: 'NotFoundError', message: `Session not found: ${id}`, data: { sessionID: id } };
        continue; // not an OpenCode session: nothing can run in it
      }
      const a = await this.o.admit(id, route);
      if (!a.ok) {
        this.stats.refused++;
        return { refused: true, status: a.status, name: a.name, message: a.message, data: { sessionID: id, ...(a.data ?? {}) } };
      }
      admitted.push(id);
    }
    // A quiesce may have begun while the gateway answered (the seal committed after this admission):
    // then it may already have found nothing in flight, so this request must not go out.
    const closed = admitted.find((id) => this.closing.has(id));
    return closed ? sealed(closed) : admitted;
  }

  private settle(id: string) {
    const n = (this.inflight.get(id) ?? 1) - 1;
    if (n <= 0) this.inflight.delete(id); else this.inflight.set(id, n);
    for (const w of this.inflightWaiters.get(id)?.splice(0) ?? []) w();
  }

  private refuse(res: http.ServerResponse, r: Refusal & { data?: Record<string, unknown> }) {
    return this.fail(res, r.status, r.name, r.message, r.data ?? {});
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

  /** The headers forwarded: the client's, less hop-by-hop ones and its credentials; OpenCode's password when `authenticated`. */
  private headersFor(req: http.IncomingMessage, body: Buffer | null, authenticated: boolean): http.OutgoingHttpHeaders {
    const h: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && v !== undefined) h[k] = v;
    h.host = this.upstream.host;
    if (authenticated) h.authorization = this.upstreamAuth;
    if (body) {
      // The body the proxy read and re-serialised: JSON in UTF-8, of this length.
      h['content-length'] = String(body.length);
      delete h['content-encoding'];
      if (body.length) h['content-type'] = 'application/json';
    }
    return h;
  }

  /**
   * Forwards one request (streamed both ways: SSE stays a stream); resolves when the response has ended.
   * `authenticated`: the client gave the proxy password, so the request carries OpenCode's.
   */
  private forward(req: http.IncomingMessage, res: http.ServerResponse, target: Target, body: Buffer | null, sessions: string[], authenticated: boolean): Promise<void> {
    this.stats.forwarded++;
    // A read in absolute form (`GET http://host/path`) goes out as its path; anything else exactly as read.
    const path = target.raw.startsWith('/') ? target.raw : (() => { const u = new URL(target.raw, 'http://proxy'); return u.pathname + u.search; })();
    this.o.onForward?.({ method: req.method ?? 'GET', target: path, sessions });
    return new Promise<void>((resolve) => {
      let up: http.ClientRequest;
      try {
        up = http.request({ host: this.upstream.hostname, port: this.upstream.port, method: req.method, path, headers: this.headersFor(req, body, authenticated) }, (ur) => {
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
      } catch (e: any) { // a target Node will not send (e.g. raw non-ASCII in a read)
        req.resume();
        this.fail(res, 400, 'BadRequestError', `The gateway proxy cannot forward this request target (${e?.message ?? e}).`);
        return resolve();
      }
      up.on('error', (e) => {
        this.log(`upstream ${req.method} ${path}${sessions.length ? ` (${sessions.join(',')})` : ''}: ${e.message}`);
        this.fail(res, 502, 'ProxyError', 'The OpenCode server behind the gateway proxy is not reachable.');
        resolve();
      });
      res.on('close', () => { up.destroy(); resolve(); }); // the client went away (e.g. an SSE reader)
      if (body) up.end(body);
      else req.pipe(up);
    });
  }

  /**
   * WebSocket (PTY connect): authenticated and read like work (a tunnel can carry anything), admitted for
   * every session its URL or headers name, then a raw tunnel to OpenCode with its password. The client's
   * bytes reach OpenCode only once OpenCode has switched protocols (101): a refused upgrade cannot be
   * followed by requests of the client's own on the same connection.
   */
  private async onUpgrade(req: http.IncomingMessage, socket: net.Socket, head: Buffer) {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const answer = (status: number, text: string, extra: string[] = [], body = '') => socket.end(
      [`HTTP/1.1 ${status} ${text}`, ...extra, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close', '', body].join('\r\n'));
    if (!this.authorized(req)) {
      this.stats.unauthorized++;
      return answer(401, 'Unauthorized', ['WWW-Authenticate: Basic realm="opencode gateway proxy"']);
    }
    const method = req.method ?? 'GET';
    if (method !== 'GET') return answer(405, 'Method Not Allowed');
    const refusal = (r: Refusal & { data?: Record<string, unknown> }) =>
      answer(r.status, http.STATUS_CODES[r.status] ?? 'Refused', [], JSON.stringify({ name: r.name, data: { message: r.message, ...(r.data ?? {}) } }));
    const target = readTarget(method, req.url ?? '/', true);
    if (target.refused) return refusal(target);
    const admitted = await this.admitAll(sessionsNamed(target, req.headers, undefined), target.route);
    if ('refused' in admitted) return refusal(admitted);
    if (socket.destroyed) return;
    for (const id of admitted) this.tunnels(id).add(socket);
    socket.once('close', () => { for (const id of admitted) this.tunnels(id).delete(socket); });

    const up = net.connect(Number(this.upstream.port), this.upstream.hostname, () => {
      const lines = [`${method} ${target.raw} HTTP/1.1`, `host: ${this.upstream.host}`, `authorization: ${this.upstreamAuth}`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const k = req.rawHeaders[i];
        if (['host', 'authorization', 'content-length', 'transfer-encoding'].includes(k.toLowerCase())) continue;
        lines.push(`${k}: ${req.rawHeaders[i + 1]}`);
      }
      up.write(lines.join('\r\n') + '\r\n\r\n');
    });
    this.sockets.add(up);
    let answered = Buffer.alloc(0);
    const held: Buffer[] = head.length ? [head] : [];
    const hold = (c: Buffer) => { held.push(c); };
    socket.on('data', hold);
    const onHead = (c: Buffer) => {
      answered = Buffer.concat([answered, c]);
      const end = answered.indexOf('\r\n\r\n');
      if (end < 0) { if (answered.length > 64 * 1024) up.destroy(); return; }
      up.off('data', onHead);
      socket.write(answered);
      if (/^HTTP\/1\.[01] 101 /.test(answered.subarray(0, 16).toString('latin1'))) {
        socket.off('data', hold);
        for (const c of held.splice(0)) up.write(c);
        up.pipe(socket);
        socket.pipe(up);
      } else {
        // Refused by OpenCode: its answer goes back, nothing more of the client's goes to OpenCode.
        socket.off('data', hold);
        socket.resume();
        up.pipe(socket);
      }
    };
    up.on('data', onHead);
    up.once('close', () => { this.sockets.delete(up); socket.destroy(); });
    up.on('error', () => socket.destroy());
    socket.on('error', () => up.destroy());
    socket.once('close', () => up.destroy());
  }

  private tunnels(id: string): Set<net.Socket> {
    let set = this.openTunnels.get(id);
    if (!set) this.openTunnels.set(id, (set = new Set()));
    return set;
  }
}
