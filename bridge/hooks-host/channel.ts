// The loopback channel of a hooks-driven host: the HTTP server its hook script and its launcher talk to, and the
// launcher's side of it. Every request must carry the host's secret (local-channel.ts): one without it is
// answered 401 and nothing is read or changed. `POST /hook/<event>` answers the hook's decision as text (`0`, or
// `2` and the reason: what the hook script turns into its exit code); every other route is JSON. The server
// listens on 127.0.0.1 and writes its port to `<dir>/host.port` (removed at stop unless another host took it).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Decision } from './admission.js';
import { clientSecret, hostSecret, sameSecret, SECRET_HEADER, type AgentNames } from './local-channel.js';

export interface ChannelHandlers {
  /** A hook: its event, its JSON input, the launch token it carried (or ''), and its parent's PID. */
  hook(event: string, input: Record<string, unknown>, launchToken: string, ppid: number): Promise<Decision>;
  /** The JSON routes (`/launch`, `/launched`, `/exited`…): the status and body answered. */
  routes: Record<string, (body: any) => Promise<[number, unknown]>>;
  /** Events refused (exit 2) when their handling fails unexpectedly: those whose refusal keeps a seal provable. */
  failClosed: readonly string[];
}

export class HostChannel {
  private server: http.Server | null = null;
  port = 0;
  readonly secret: string;
  constructor(private readonly dir: string, private readonly names: AgentNames, private readonly handlers: ChannelHandlers,
    private readonly log: (m: string) => void, readonly stats: { unauthenticated: number } = { unauthenticated: 0 }) {
    this.secret = hostSecret(dir);
  }

  portFile() { return path.join(this.dir, 'host.port'); }

  async start(port = 0): Promise<number> {
    this.server = http.createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    const pf = this.portFile();
    fs.writeFileSync(`${pf}.tmp`, `${this.port}\n`, { mode: 0o600 });
    fs.renameSync(`${pf}.tmp`, pf);
    return this.port;
  }

  async stop(): Promise<void> {
    // No port file left behind for a launcher to find (unless another host took the directory meanwhile).
    try { if (this.port && fs.readFileSync(this.portFile(), 'utf8').trim() === String(this.port)) fs.rmSync(this.portFile()); } catch { /* gone */ }
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    this.server?.closeAllConnections();
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = req.url ?? '/';
    const given = req.headers[SECRET_HEADER];
    if (!sameSecret(typeof given === 'string' ? given : undefined, this.secret)) {
      // Anyone on the machine can reach the port: nothing is read or changed for a request without the secret.
      this.stats.unauthenticated++;
      this.log(`refused ${req.method} ${url.slice(0, 100)}: no valid ${SECRET_HEADER} (the secret is in ${this.dir}/host.secret)`);
      res.writeHead(401, { 'content-type': 'application/json', connection: 'close' });
      res.end(JSON.stringify({ error: `the ${this.names.label} host answers only requests that carry its secret (${path.join(this.dir, 'host.secret')})` }));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      if (req.method === 'POST' && url.startsWith('/hook/')) {
        let input: Record<string, unknown> = {};
        try { const v = JSON.parse(text); if (v && typeof v === 'object' && !Array.isArray(v)) input = v; } catch { /* an empty or torn body: decided by the host */ }
        const d = await this.handlers.hook(url.slice('/hook/'.length), input, String(req.headers['x-launch'] ?? ''), Number(req.headers['x-ppid'] ?? 0));
        res.writeHead(200, { 'content-type': 'text/plain', connection: 'close' });
        res.end(d.exit === 2 ? `2\n${d.reason}` : '0\n');
        return;
      }
      const route = req.method === 'POST' ? this.handlers.routes[url] : undefined;
      if (route) {
        const [status, body] = await route(text ? JSON.parse(text) : {});
        return json(res, status, body);
      }
      if (url === '/health' && this.handlers.routes['/health']) return json(res, ...(await this.handlers.routes['/health']({})));
      json(res, 404, { error: 'not found' });
    } catch (e: any) {
      this.log(`http ${url}: ${e?.stack ?? e}`);
      if (url.startsWith('/hook/')) {
        // An unexpected failure: refused (exit 2) where refusing is what keeps a seal provable, else allowed.
        const event = url.slice('/hook/'.length);
        res.writeHead(200, { 'content-type': 'text/plain', connection: 'close' });
        res.end(this.handlers.failClosed.includes(event) ? `2\nthe gateway's ${this.names.label} host failed: ${e?.message ?? e}` : '0\n');
      } else json(res, 500, { error: String(e?.message ?? e) });
    }
  }
}

function json(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** A launcher's request to the host of `dir` (its port from `host.port`, its secret from `host.secret`), with errors that say what to run. */
export async function hostCall(dir: string, names: AgentNames, route: string, body: unknown): Promise<any> {
  const start = `start it with \`gateway host ${names.command} --dir ${dir}\` (and keep it running)`;
  let port: string;
  try { port = fs.readFileSync(path.join(dir, 'host.port'), 'utf8').trim(); } catch {
    throw new Error(`no ${names.label} host runs with directory ${dir}: ${start}`);
  }
  const secret = clientSecret(dir, names);
  let r: Response;
  try {
    r = await fetch(`http://127.0.0.1:${port}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', [SECRET_HEADER]: secret }, body: JSON.stringify(body) });
  } catch (e: any) {
    const why = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(e);
    throw new Error(`the ${names.label} host of ${dir} does not answer at 127.0.0.1:${port} (${why}; ${path.join(dir, 'host.port')} is left by a host that stopped): ${start}`);
  }
  if (r.status === 401) {
    throw new Error(`the process at 127.0.0.1:${port} refused the secret of ${path.join(dir, 'host.secret')}: it is not the ${names.label} host of ${dir}; restart the host (\`gateway host ${names.command} --dir ${dir}\`)`);
  }
  if (!r.ok) throw new Error(`the ${names.label} host of ${dir} answered ${route} with HTTP ${r.status}: ${(await r.text()).slice(0, 500)}`);
  return r.json();
}
