import { randomBytes } from 'node:crypto';
import { connect, type Sql } from './connection.js';

interface Node { host: string; port: number }

/**
 * A database of its own on a server (a test file's, a benchmark's): created empty (or as a copy of
 * `template`, a database nobody is connected to), dropped (with
 * FORCE, closing what is still connected) by `drop`. `prefix` names it for whoever looks at the server.
 *
 * When the server is a Citus coordinator (the `citus` extension in the server URL's database, and
 * workers in its pg_dist_node), the database is made on the coordinator and on every worker (same name
 * and user), with `citus` in each and the workers added to the coordinator's: a small cluster of its own
 * that `distribute()` (db/distribute.ts) can spread the schema over. A copy of a template there is a
 * copy on every node of that node's database of the template's name (made here, then `freezeTemplate`):
 * the coordinator's metadata names its workers by host and port, not by database, so the copies make a
 * cluster of their own with the same placement. `drop` drops it on every node.
 */
export async function createScratchDatabase(serverUrl: string, prefix: string, opts: { template?: string } = {}): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const cluster = await withConnection(serverUrl, async (admin) => {
    const c = await citusCluster(admin, serverUrl);
    if (opts.template && !/^[a-z_][a-z0-9_]*$/.test(opts.template)) throw new Error(`not a database name: ${opts.template}`);
    // A copy of the template (its schema and rows): made by the server file by file, far faster than migrating.
    await admin.unsafe(`CREATE DATABASE ${name}${opts.template ? ` TEMPLATE ${opts.template}` : ''}`);
    return c;
  });
  const made: string[] = [serverUrl];
  const drop = async () => {
    // The coordinator first: its sessions hold the connections to the workers' databases.
    for (const server of made) {
      await withConnection(server, (a) => a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {});
    }
  };
  const url = withDatabase(serverUrl, name);
  if (cluster) {
    const { coordinator, workers } = cluster;
    try {
      for (const w of workers) {
        const server = onNode(serverUrl, w);
        await withConnection(server, (a) => a.unsafe(`CREATE DATABASE ${name}${opts.template ? ` TEMPLATE ${opts.template}` : ''}`));
        made.push(server);
        if (!opts.template) await withConnection(withDatabase(server, name), (db) => db`CREATE EXTENSION citus`);
      }
      if (!opts.template) await withConnection(url, async (db) => {
        await db`CREATE EXTENSION citus`;
        await db`SELECT citus_set_coordinator_host(${coordinator.host}, ${coordinator.port})`;
        for (const w of workers) await addNode(db, w);
      });
    } catch (e) {
      await drop();
      throw e;
    }
  }
  return { url, name, drop };
}

/**
 * Makes `name` (a scratch database of `serverUrl`'s server, on every node of a Citus cluster) fit to be copied
 * by `createScratchDatabase(…, { template })`: a copy needs a database nobody is connected to, and Citus keeps
 * connections of its own to every database it is in (each node's maintenance daemon, the coordinator's
 * connections to the workers). New connections are refused from now on and those open are ended, on the
 * coordinator first (whose connections reach the workers). Its `drop` still drops it.
 */
export async function freezeTemplate(serverUrl: string, name: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a database name: ${name}`);
  const servers = await withConnection(serverUrl, async (admin) => {
    const c = await citusCluster(admin, serverUrl);
    return [serverUrl, ...(c?.workers ?? []).map((w) => onNode(serverUrl, w))];
  });
  for (const server of servers) {
    await withConnection(server, async (a) => {
      await a.unsafe(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
      await a`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`;
    });
  }
}

/**
 * Adds a worker to the new database's cluster. Adding a node opens connections from the coordinator to
 * the worker; when the worker has no connection to spare at that moment (a whole test suite's files
 * share the cluster) Citus fails it as "failure on connection marked as essential", and nothing was
 * added: it is tried again a few times, after a pause. (citus_add_node of a node already added answers
 * its ID, so a try that did add it and then failed to answer is harmless too.)
 */
async function addNode(db: Sql, w: Node): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await db`SELECT citus_add_node(${w.host}, ${w.port})`;
      return;
    } catch (e) {
      if (attempt >= 5 || !/connection marked as essential|could not establish|connection to the remote node/i.test(String((e as Error).message))) throw e;
      await new Promise((r) => setTimeout(r, 250 * attempt));
    }
  }
}

/** The coordinator and active primary workers when `admin`'s database is a Citus coordinator with workers, else null. */
async function citusCluster(admin: Sql, serverUrl: string): Promise<{ coordinator: Node; workers: Node[] } | null> {
  const [ext] = await admin`SELECT 1 FROM pg_extension WHERE extname = 'citus'`;
  if (!ext) return null;
  const rows = await admin<{ groupid: number; nodename: string; nodeport: number }[]>`
    SELECT groupid, nodename, nodeport FROM pg_dist_node WHERE noderole = 'primary' AND isactive ORDER BY groupid`;
  const workers = rows.filter((r) => r.groupid !== 0).map((r) => ({ host: r.nodename, port: r.nodeport }));
  if (!workers.length) return null;
  const c = rows.find((r) => r.groupid === 0);
  const u = new URL(serverUrl);
  return { coordinator: c ? { host: c.nodename, port: c.nodeport } : { host: u.hostname, port: Number(u.port || 5432) }, workers };
}

async function withConnection<T>(url: string, fn: (sql: Sql) => Promise<T>): Promise<T> {
  const sql = connect(url, { max: 1 });
  try {
    return await fn(sql);
  } finally {
    await sql.end();
  }
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** `url` (user, password, database, options) pointed at another node's host and port. */
function onNode(url: string, node: Node): string {
  const u = new URL(url);
  u.hostname = node.host;
  u.port = String(node.port);
  return u.toString();
}
