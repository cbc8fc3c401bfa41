// The processes of an agent's session, read from /proc (Linux): the agent process a hook ran under (Claude
// Code, Codex), its descendants, and the seal's kill of the whole tree (stopped first, so that none escapes by
// forking).
import fs from 'node:fs';

/** Whether `pid` exists (a zombie too). */
export function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e: any) { return e?.code === 'EPERM'; }
}

function signal(pid: number, s: NodeJS.Signals): void {
  try { process.kill(pid, s); } catch { /* gone */ }
}

/** Whether `pid` is a process that still runs (not gone, not a zombie waiting for its parent). */
function running(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch { return false; }
}

/** How long a seal waits for the processes it killed to be gone (SIGKILL: milliseconds, unless one is stuck in the kernel). */
const PROCESSES_GONE_WITHIN_MS = 5_000;

/**
 * Kills the agent (`pid`: Claude Code, Codex) and every process it started, and resolves once they are all gone (or after
 * PROCESSES_GONE_WITHIN_MS for one stuck in the kernel). All of them are stopped first, so none starts
 * another: a process killed while it forks would leave its child to init, outside the tree (seen: a
 * shell's `timeout`, which runs in a process group of its own, outliving the seal). Then each is killed
 * with its process group (background shells run in groups of their own and outlive Claude Code
 * otherwise), then Claude Code itself (with its own group when the launcher made one). A group is killed
 * whole only when it is not Claude Code's own one shared with others (an interactive launch and an
 * observed session run in the terminal's job, which holds the launcher and the shell too), nor this
 * process's. `pause`: how to wait between checks (the host is woken early when a launch exits).
 */
export async function killProcessTree(pid: number, pause: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms))): Promise<void> {
  const own = pgidOf(pid);
  const mine = pgidOf(process.pid);
  signal(pid, 'SIGSTOP');
  const started = stopDescendants(pid);
  for (const d of started) {
    if (d.pgid > 1 && d.pgid !== own && d.pgid !== mine) signal(-d.pgid, 'SIGKILL');
    signal(d.pid, 'SIGKILL');
  }
  if (own === pid && own !== mine) signal(-pid, 'SIGKILL');
  signal(pid, 'SIGKILL');
  const deadline = Date.now() + PROCESSES_GONE_WITHIN_MS;
  while ((alive(pid) || started.some((d) => running(d.pid))) && Date.now() < deadline) await pause(10);
  while (alive(pid)) await pause(50);
}

/**
 * Stops (SIGSTOP) every process descended from `pid`, scanning again until a scan finds none it has not
 * stopped: a stopped process starts no other, and one that was forking shows its child in the next scan,
 * so the tree answered is the whole of it. `pid` itself must be stopped already.
 */
function stopDescendants(pid: number): { pid: number; pgid: number }[] {
  const seen = new Map<number, { pid: number; pgid: number }>();
  for (let round = 0; round < 100; round++) {
    const fresh = descendants(pid).filter((d) => !seen.has(d.pid));
    if (!fresh.length) break;
    for (const d of fresh) { seen.set(d.pid, d); signal(d.pid, 'SIGSTOP'); }
  }
  return [...seen.values()];
}

/** Every process descended from `pid`, with its process group (read from /proc). */
function descendants(pid: number): { pid: number; pgid: number }[] {
  const kids = new Map<number, { pid: number; pgid: number }[]>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(f[1]);
      (kids.get(ppid) ?? kids.set(ppid, []).get(ppid)!).push({ pid: Number(d), pgid: Number(f[2]) });
    } catch { /* gone */ }
  }
  const out: { pid: number; pgid: number }[] = [];
  const todo = [pid];
  while (todo.length) for (const k of kids.get(todo.pop()!) ?? []) { out.push(k); todo.push(k.pid); }
  return out;
}

function pgidOf(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch { return null; }
}

/**
 * The agent process a hook ran under: the hook's parent or an ancestor up to three levels (a shell in between),
 * the first whose command line `isAgent` recognises.
 */
export function agentProcess(ppid: number, isAgent: (argv: string[]) => boolean): number | null {
  let pid = ppid;
  for (let i = 0; i < 3 && pid > 1; i++) {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (isAgent(argv)) return pid;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch { return null; }
  }
  return null;
}

/** What the host checks of the process a hook ran under before it reads or captures anything the hook names. */
export interface ProcessFacts {
  pid: number;
  uid: number;
  /** Its working directory (`/proc/<pid>/cwd`). */
  cwd: string;
  /** Where that agent keeps its sessions (Claude Code: `$CLAUDE_CONFIG_DIR` or `$HOME/.claude`), from its own environment. */
  configDir: string | null;
  /** When it started, in clock ticks after boot (with the PID, it names the process: a PID can be reused). */
  startTicks: number;
}

/** The facts of process `pid`, or null when it is gone or cannot be read (another user's, without the right). */
export function processFacts(pid: number, configDirOf: (env: Map<string, string>) => string | null = () => null): ProcessFacts | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const uid = Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
    const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
    const env = new Map(fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').map((kv) => {
      const i = kv.indexOf('=');
      return [kv.slice(0, i), kv.slice(i + 1)] as [string, string];
    }));
    const configDir = configDirOf(env);
    return Number.isFinite(uid) ? { pid, uid, cwd, configDir, startTicks: Number(f[19]) } : null;
  } catch { return null; }
}

/** The processes whose environment holds `name=value` (every descendant of a process given it, unless one cleared its environment). */
export function processesWithEnv(name: string, value: string): number[] {
  const want = Buffer.from(`${name}=${value}\0`);
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const env = fs.readFileSync(`/proc/${d}/environ`);
      if (env.indexOf(want) === 0 || env.indexOf(Buffer.concat([Buffer.from('\0'), want])) >= 0) out.push(Number(d));
    } catch { /* gone, or another user's */ }
  }
  return out;
}

/**
 * Kills every process whose environment holds one of the markers (`name=value`: a launch token the launcher gave
 * the agent, inherited by all it started, also those reparented to init in groups or sessions of their own),
 * each with its process group when that group is its own, and resolves once they are gone. Stopped first and
 * scanned again until a scan finds none new (a process forking meanwhile leaves no child behind). Answers how
 * many it killed.
 */
export async function killMarked(name: string, values: string[], pause: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms))): Promise<number> {
  const mine = pgidOf(process.pid);
  const seen = new Map<number, number | null>();
  for (let round = 0; round < 100; round++) {
    const fresh = values.flatMap((v) => processesWithEnv(name, v)).filter((p) => !seen.has(p));
    if (!fresh.length) break;
    for (const p of fresh) { seen.set(p, pgidOf(p)); signal(p, 'SIGSTOP'); }
  }
  for (const [p, g] of seen) {
    if (g !== null && g > 1 && g !== mine && seen.has(g)) signal(-g, 'SIGKILL');
    signal(p, 'SIGKILL');
  }
  const deadline = Date.now() + PROCESSES_GONE_WITHIN_MS;
  while ([...seen.keys()].some(running) && Date.now() < deadline) await pause(10);
  return seen.size;
}
