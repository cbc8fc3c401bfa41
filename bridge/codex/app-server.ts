// A short-lived `codex app-server` (JSON-RPC lines over stdio) the host runs itself, for what Codex offers only
// there: compaction of a stored thread (`thread/resume`, then `thread/compact/start`; Codex asks the model for a
// handoff summary and writes a `compacted` line into the rollout, the context the next resume sends).
import { spawn } from 'node:child_process';
import readline from 'node:readline';

export interface AppServer {
  call(method: string, params: unknown): Promise<any>;
  /** Resolves with the first notification of `method` whose params `match`. */
  notified(method: string, match?: (params: any) => boolean): Promise<any>;
  close(): Promise<void>;
}

export async function startAppServer(bin: string, cwd: string, env: NodeJS.ProcessEnv): Promise<AppServer> {
  const child = spawn(bin, ['app-server'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr!.resume();
  let next = 0;
  const calls = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  const waits: { method: string; match: (p: any) => boolean; resolve: (p: any) => void }[] = [];
  const gone = new Promise<void>((r) => child.once('exit', () => {
    for (const c of calls.values()) c.reject(new Error('codex app-server exited'));
    r();
  }));
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    let m: any;
    try { m = JSON.parse(line); } catch { return; }
    if (m?.id !== undefined && calls.has(m.id)) {
      const c = calls.get(m.id)!;
      calls.delete(m.id);
      if (m.error) c.reject(new Error(`codex app-server: ${m.error.message ?? JSON.stringify(m.error)}`)); else c.resolve(m.result);
      return;
    }
    if (typeof m?.method !== 'string') return;
    for (const w of [...waits]) if (w.method === m.method && w.match(m.params)) { waits.splice(waits.indexOf(w), 1); w.resolve(m.params); }
  });
  const send = (m: unknown) => child.stdin!.write(JSON.stringify(m) + '\n');
  const server: AppServer = {
    call: (method, params) => new Promise((resolve, reject) => { const id = ++next; calls.set(id, { resolve, reject }); send({ id, method, params }); }),
    notified: (method, match = () => true) => new Promise((resolve) => waits.push({ method, match, resolve })),
    async close() { child.stdin!.end(); child.kill('SIGTERM'); await gone; },
  };
  await new Promise<void>((r, j) => { child.once('spawn', () => r()); child.once('error', j); });
  await server.call('initialize', { clientInfo: { name: 'agent-history-gateway', title: 'Agent history gateway', version: '1' }, capabilities: { experimentalApi: true } });
  send({ method: 'initialized' });
  return server;
}
