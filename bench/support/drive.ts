/**
 * The HTTP load generator of the request benchmarks: CLIENTS keep-alive clients (node:http, one socket
 * each) in a child process of their own, sending one body back to back for a measured window after a
 * warm-up. The child has its own event loop and CPU, so this process's CPU time over the window is the
 * servers' own work (reported per request; Postgres not included).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// V8's full collection, for the start of each run (drive): the flag exposes `gc` to contexts made after it.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** The load generator, as plain JavaScript so the child process needs no TypeScript loader. */
const DRIVER = `
const http = require('node:http');
const { url, headers: extra, body, clients, warmupMs, runMs } = JSON.parse(process.env.BENCH_DRIVE);
const u = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: clients, maxFreeSockets: clients });
const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...extra };
function once() {
  return new Promise((resolve) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve(res.statusCode === 200 && text.includes('"data"') && !text.includes('"errors"') ? null : res.statusCode + ' ' + text.slice(0, 200));
      });
      res.on('error', (e) => resolve(String(e)));
    });
    req.on('error', (e) => resolve(String(e)));
    req.end(body);
  });
}
(async () => {
  const start = performance.now();
  const measureFrom = start + warmupMs;
  const end = measureFrom + runMs;
  const lat = [];
  let failures = 0;
  let total = 0;
  let firstFailure = null;
  setTimeout(() => process.send({ type: 'mark' }), warmupMs);
  await Promise.all(Array.from({ length: clients }, async () => {
    for (;;) {
      const t0 = performance.now();
      if (t0 >= end) return;
      const err = await once();
      const t1 = performance.now();
      total++;
      if (t0 >= measureFrom && t1 <= end) lat.push(t1 - t0);
      if (err) { failures++; firstFailure ??= err; }
    }
  }));
  process.send({ type: 'done', lat, failures, firstFailure, total }, () => { agent.destroy(); process.exit(0); });
})();
`;

/** dbCpuUs: CPU of this machine's PostgreSQL processes per request (null when it runs elsewhere). */
export interface Run { rps: number; p50: number; p99: number; failures: number; firstFailure: string | null; total: number; cpuUs: number; dbCpuUs: number | null }

/**
 * CPU ticks used so far by each PostgreSQL process of this machine (every process named `postgres`:
 * the server's backends, the pools' connections among them), by PID, or null when there are none or
 * /proc cannot be read. Clock ticks of 10 ms (Linux's USER_HZ), so a run must last seconds.
 */
function postgresTicks(): Map<string, number> | null {
  const out = new Map<string, number>();
  try {
    for (const pid of readdirSync('/proc')) {
      if (!/^[0-9]+$/.test(pid)) continue;
      let stat: string;
      try { stat = readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { continue; }
      const close = stat.lastIndexOf(')');
      if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
      const f = stat.slice(close + 2).split(' ');
      out.set(pid, Number(f[11]) + Number(f[12])); // utime, stime (fields 14 and 15 of stat)
    }
  } catch {
    return null;
  }
  return out.size ? out : null;
}

/**
 * The CPU (µs) of this machine's PostgreSQL processes over a window, processes that ended during it
 * included: a process's CPU vanishes from /proc when it exits (a pool's idle connection closing, e.g.
 * node-postgres's after 10 s, while another server is measured), so each one's ticks are sampled every
 * second and its last sample counts. A process idle before it exits (an idle timeout) loses nothing.
 * The sampling runs in this process, where the servers are measured: `ownUs` is its CPU (a scan of
 * /proc is about 2 ms here), which the caller takes off the servers' CPU.
 */
function postgresCpuWindow(): { stop(): number | null; ownUs: number } {
  const w = { stop, ownUs: 0 };
  const last = new Map<string, number>();
  const sample = () => {
    const c0 = process.cpuUsage();
    const ticks = postgresTicks();
    for (const [pid, t] of ticks ?? []) last.set(pid, t);
    const c = process.cpuUsage(c0);
    w.ownUs += c.user + c.system;
    return ticks;
  };
  const start = sample();
  const timer = setInterval(sample, 1000);
  timer.unref();
  let result: number | null | undefined;
  function stop(): number | null {
    if (result !== undefined) return result;
    clearInterval(timer);
    if (!start) return (result = null);
    sample();
    let ticks = 0;
    for (const [pid, t] of last) ticks += t - (start.get(pid) ?? 0);
    return (result = ticks * 10_000);
  }
  return w;
}
export interface DriveOptions { clients: number; warmupS: number; seconds: number }

/**
 * One run of `body` against `url`; `headers` are added to every request (e.g. authorization). The run
 * starts from a collected heap: servers measured in turn in one process would otherwise pay for the
 * garbage the one before them left (a major collection due in the next run).
 */
export function drive(url: string, headers: Record<string, string>, body: string, o: DriveOptions): Promise<Run> {
  collectGarbage();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', DRIVER], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, NODE_ENV: 'production', BENCH_DRIVE: JSON.stringify({ url, headers, body, clients: o.clients, warmupMs: o.warmupS * 1000, runMs: o.seconds * 1000 }) },
    });
    let cpu0: NodeJS.CpuUsage | null = null;
    let cpu: number | null = null;
    let dbWindow: ReturnType<typeof postgresCpuWindow> | null = null;
    let db: number | null = null;
    /** The servers' CPU (µs): this process's since the mark, without what sampling PostgreSQL's CPU cost it. */
    const serversCpu = (): number => { const c = process.cpuUsage(cpu0 ?? undefined); return Math.max(0, c.user + c.system - (dbWindow?.ownUs ?? 0)); };
    child.once('error', reject);
    child.on('message', (m: any) => {
      if (m.type === 'mark') {
        cpu0 = process.cpuUsage();
        dbWindow = postgresCpuWindow();
        setTimeout(() => { db = dbWindow!.stop(); cpu = serversCpu(); }, o.seconds * 1000).unref();
        return;
      }
      const lat = Float64Array.from(m.lat as number[]).sort();
      const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? NaN;
      const dbUsed = db ?? dbWindow?.stop() ?? null;
      const c = cpu ?? serversCpu();
      resolve({
        rps: lat.length / o.seconds, p50: q(0.5), p99: q(0.99), failures: m.failures, firstFailure: m.firstFailure, total: m.total,
        cpuUs: c / Math.max(1, lat.length),
        dbCpuUs: dbUsed === null ? null : dbUsed / Math.max(1, lat.length),
      });
    });
  });
}

export const median = (xs: number[]) => { const a = [...xs].sort((x, y) => x - y); const m = a.length >> 1; return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2; };
