import { DatabaseLaggingError, isDatabaseUnavailable, type Db, type Sql, type Tx } from '../db/connection.js';
import { notify } from './notices.js';
import { isUnscopedAdmin, ownsHost, type Actor } from './access.js';
import { HostNotFoundError, InvalidRequestError } from './errors.js';
import { newId } from './ids.js';
import { commitEvent } from './events/commit.js';
import { lockSessionIfPresent } from './session-lock.js';
import type { HostRow } from './rows.js';
import { checkJson, checkText, LIMITS, optionalId, requireId } from './validate.js';
import { recordSettlement } from './settlements.js';

export const LEASE_MIN_MS = 1_000;
export const LEASE_MAX_MS = 10 * 60_000;

export interface ModelInput { providerID: string; modelID: string }

export interface RegisterHostInput {
  hostID?: string | null;
  name: string;
  capabilities?: { cancel?: boolean | null; compact?: boolean | null; generate?: boolean | null; prompt?: boolean | null; exclusiveAdmission?: boolean | null; sessions?: boolean | null } | null;
  models?: ModelInput[] | null;
  leaseMs?: number | null;
}

/**
 * Registers a host, or re-registers one after its restart (same hostID: it takes its work back,
 * and may then restore jobs that were marked LOST). A host token may only act for hosts it registered.
 */
export async function registerHost(sql: Sql, actor: Actor, input: RegisterHostInput): Promise<HostRow> {
  const hostID = optionalId('host', input.hostID, 'hostID');
  const name = checkText(input.name ?? '', 'name', LIMITS.hostName, { nonEmpty: true });
  const leaseMs = input.leaseMs ?? 30_000;
  if (!Number.isInteger(leaseMs) || leaseMs < LEASE_MIN_MS || leaseMs > LEASE_MAX_MS) {
    throw new InvalidRequestError('leaseMs', `leaseMs must be an integer from ${LEASE_MIN_MS} to ${LEASE_MAX_MS}.`);
  }
  const models = (input.models ?? []).map((m, i) => ({
    providerID: checkText(m.providerID, `models[${i}].providerID`, 200, { nonEmpty: true }),
    modelID: checkText(m.modelID, `models[${i}].modelID`, 200, { nonEmpty: true }),
  }));
  checkJson(models, 'models', 256 * 1024);
  const caps = input.capabilities ?? {};
  const row = {
    name,
    canCancel: caps.cancel ?? false,
    canCompact: caps.compact ?? false,
    canGenerate: caps.generate ?? false,
    canPrompt: caps.prompt ?? false,
    exclusiveAdmission: caps.exclusiveAdmission ?? true,
    canManageSessions: caps.sessions ?? false,
  };
  // Bounded as a renewal is: a host's registration answers (503 at worst) while a worker's unfinished prepared
  // transaction holds the hosts' rows.
  return boundedHostWrite(sql, async (tx) => {
    if (hostID) {
      const [existing] = await tx<HostRow[]>`SELECT * FROM hosts WHERE id = ${hostID} FOR UPDATE`;
      if (!existing || !ownsHost(actor, existing)) throw new HostNotFoundError(hostID);
      const [h] = await tx<HostRow[]>`
        UPDATE hosts SET name = ${row.name}, can_cancel = ${row.canCancel}, can_compact = ${row.canCompact},
          can_generate = ${row.canGenerate}, can_prompt = ${row.canPrompt}, exclusive_admission = ${row.exclusiveAdmission}, can_manage_sessions = ${row.canManageSessions}, models = ${tx.json(models)}, lease_ms = ${leaseMs},
          lease_expires_at = now() + ${leaseMs} * interval '1 millisecond', renewed_at = now()
        WHERE id = ${hostID} RETURNING *`;
      return h;
    }
    const [h] = await tx<HostRow[]>`
      INSERT INTO hosts (id, name, can_cancel, can_compact, can_generate, can_prompt, exclusive_admission, can_manage_sessions, models, lease_ms, lease_expires_at, token_id)
      VALUES (${newId('host')}, ${row.name}, ${row.canCancel}, ${row.canCompact}, ${row.canGenerate}, ${row.canPrompt}, ${row.exclusiveAdmission}, ${row.canManageSessions},
        ${tx.json(models)}, ${leaseMs}, now() + ${leaseMs} * interval '1 millisecond', ${actor.tokenID})
      RETURNING *`;
    return h;
  });
}

/**
 * How long a renewal, or the lease sweep, waits for a host's row (ms): past it the database is answered
 * unavailable (DATABASE_UNAVAILABLE, 503) and the host tries again. A renewal takes milliseconds; what holds
 * the row longer is a transaction that is not finishing: on Citus, where `hosts` is a reference table and every
 * renewal a two-phase commit on every node, a transaction a worker prepared and could not commit (restarted
 * between PREPARE and COMMIT PREPARED) keeps the row locked on that worker until Citus' recovery commits it
 * (`citus.recover_2pc_interval`). Unbounded, renewals waited for that (20 s were seen), their hosts' leases
 * lapsed, and the sweep abandoned live hosts' executions.
 */
export const HOST_ROW_WAIT_MS = 1_000;
/** The whole statement's bound besides the lock wait (a worker that took the connection but does not answer). */
const HOST_STATEMENT_MS = 5_000;

/**
 * Runs `fn` in a transaction whose statements wait at most HOST_ROW_WAIT_MS for a lock and HOST_STATEMENT_MS in
 * all (`SET LOCAL`, which reaches the workers: `distribute` sets `citus.propagate_set_commands`); a statement
 * cancelled by either bound is the database being unavailable for now (DatabaseLaggingError).
 */
async function boundedHostWrite<T>(sql: Sql, fn: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await sql.begin(async (tx) => {
      await tx.unsafe(`SET LOCAL lock_timeout = ${HOST_ROW_WAIT_MS}; SET LOCAL statement_timeout = ${HOST_STATEMENT_MS}`);
      return fn(tx);
    }) as T;
  } catch (e) {
    throw hostRowBusy(e);
  }
}

/** A lock or statement timeout (55P03, 57014) as DatabaseLaggingError; any other error as it is. */
function hostRowBusy(e: unknown): unknown {
  const code = (e as { code?: unknown })?.code;
  if (code !== '55P03' && code !== '57014') return e;
  return new DatabaseLaggingError(`a host's row could not be written within ${HOST_ROW_WAIT_MS} ms`, { cause: e });
}

/**
 * Extends the lease by its length from now. A lapsed lease can be renewed; work already swept stays lost. The
 * write waits at most HOST_ROW_WAIT_MS for the host's row, then answers DATABASE_UNAVAILABLE (503, Retry-After),
 * which the hosts retry (bridge/common/host-lease.ts, host/host.ts) as any unavailability.
 */
export async function renewHostLease(sql: Sql, actor: Actor, input: { hostID: string }): Promise<HostRow> {
  const hostID = requireId('host', input.hostID, 'hostID');
  // The lease length is read first and the renewal guarded by it: Citus (hosts is a reference table
  // there) refuses a write whose SET calls a non-immutable function on a column (now() + lease_ms).
  for (;;) {
    const [cur] = await sql<{ leaseMs: number }[]>`
      SELECT lease_ms FROM hosts WHERE id = ${hostID} AND (${isUnscopedAdmin(actor)} OR token_id = ${actor.tokenID})`;
    if (!cur) throw new HostNotFoundError(hostID);
    const [h] = await boundedHostWrite(sql, (tx) => tx<HostRow[]>`
      UPDATE hosts SET lease_expires_at = now() + ${cur.leaseMs} * interval '1 millisecond', renewed_at = now()
      WHERE id = ${hostID} AND lease_ms = ${cur.leaseMs} AND (${isUnscopedAdmin(actor)} OR token_id = ${actor.tokenID}) RETURNING *`)
      .catch(async (e) => {
        // The host is alive and the database could not take its renewal: say so to every instance's sweep (a
        // notice is the coordinator's own, sent even while a worker holds the row), best effort.
        if (isDatabaseUnavailable(e)) await notify(sql, { k: 'h', h: hostID }).catch(() => {});
        throw e;
      });
    if (h) return h;
    // Registered again with another lease length meanwhile: renew by that one.
  }
}

/**
 * The host, checked to belong to the caller. New work is admitted only for a host with a live lease;
 * reports about existing work (settle, finish) are taken from its owner whatever its lease says.
 */
export async function requireHost(tx: Tx, actor: Actor, hostID: string, opts: { live: boolean }): Promise<HostRow> {
  const [h] = await tx<(HostRow & { live: boolean })[]>`SELECT *, lease_expires_at > now() AS live FROM hosts WHERE id = ${hostID}`;
  checkHost(actor, hostID, h && { tokenId: h.tokenId, live: h.live }, opts);
  return h;
}

/**
 * What requireHost checks of a host, read along another row in the same statement (one round trip
 * fewer on the write paths that read a row and then check its host): `hostFacts` as its select list,
 * over `LEFT JOIN hosts <alias>`, and `hostOf` / `checkHost` on the row read.
 */
export interface HostFacts { hostFound: boolean; hostTokenId: string | null; hostLive: boolean | null }

export function hostFacts(db: Db, alias: string) {
  return db`${db(alias + '.id')} IS NOT NULL AS host_found, ${db(alias + '.token_id')} AS host_token_id,
    ${db(alias + '.lease_expires_at')} > now() AS host_live`;
}

/** The host facts of a row read with `hostFacts` (null: no such host), and the row without them. */
export function hostOf<T extends HostFacts>(row: T): { host: { tokenId: string | null; live: boolean } | null; row: Omit<T, keyof HostFacts> } {
  const { hostFound, hostTokenId, hostLive, ...rest } = row;
  return { host: hostFound ? { tokenId: hostTokenId, live: hostLive === true } : null, row: rest };
}

/** What requireHost checks of a host (null: no such host), read to be checked later with checkHost: a read that can go along with others. */
export async function hostStanding(db: Db, hostID: string): Promise<{ tokenId: string | null; live: boolean } | null> {
  const [h] = await db<{ tokenId: string | null; live: boolean }[]>`SELECT token_id, lease_expires_at > now() AS live FROM hosts WHERE id = ${hostID}`;
  return h ?? null;
}

/** requireHost's answer for a host read some other way: unknown and foreign hosts alike; a lapsed lease when `live`. */
export function checkHost(actor: Actor, hostID: string, h: { tokenId: string | null; live: boolean } | null | undefined, opts: { live: boolean }): void {
  if (!h || !ownsHost(actor, h)) throw new HostNotFoundError(hostID);
  if (opts.live && !h.live) throw new InvalidRequestError('hostID', `The lease of host ${hostID} has lapsed: register again with this hostID.`);
}

export async function getHost(db: Db, hostID: string): Promise<HostRow | null> {
  const [h] = await db<HostRow[]>`SELECT * FROM hosts WHERE id = ${hostID}`;
  return h ?? null;
}

/**
 * The lease sweep: marks running executions of hosts whose lease lapsed ABANDONED and their
 * unfinished jobs LOST. Any instance may run it at any time: each session is handled in its own
 * transaction under the session lock (SKIP LOCKED, so two sweepers never wait on or double-apply the
 * same session), and the updates are guarded by the current status.
 *
 * `windowMs`: look only at hosts whose lease lapsed within that many milliseconds (null: every lapsed
 * host). A host cannot start work once its lease has lapsed, so a host that lapsed longer ago than any
 * starting transaction lasts has nothing left to mark after the sweeps of its window. The hosts are read
 * first, from their own small table (a reference table on a cluster, read on the coordinator): with no
 * host in the window, the sweep reads nothing of the history tables (no shard of a cluster).
 *
 * A host is declared dead only when it could have renewed and did not:
 * - the sweep takes the rows of the hosts it is about to declare dead (FOR SHARE: what a renewal's write waits
 *   for, on every node of a cluster), waiting at most HOST_ROW_WAIT_MS, and checks their lease again under that
 *   lock. A renewal committed meanwhile keeps its host; a row a renewal cannot write either (a worker's
 *   unfinished prepared transaction holds it, a worker is away) stops the sweep as the database being
 *   unavailable (DatabaseLaggingError), retried at its next tick, exactly as the renewal is retried.
 * - `renewalAttempts` (host → when, this process's clock): the host asked to renew and the database could not take
 *   it (a renewal's notice, kind `h`, seen by this instance): it is alive, its lease counts from that attempt.
 * - `databaseBackAt` (the database's time when this instance found it working again after its sweep had found it
 *   unavailable): a lease is measured from the database's view, so a host's lease that lapsed while the database
 *   could not take renewals runs again, its full length, from that time (server/gateway.ts). This covers what
 *   the notices cannot: renewals that never reached the database (the coordinator itself away).
 */
export async function sweepExpiredLeases(sql: Sql, opts: { windowMs?: number | null; databaseBackAt?: string | null; renewalAttempts?: ReadonlyMap<string, number> } = {}): Promise<{ abandoned: number; lost: number }> {
  const windowMs = opts.windowMs ?? null;
  const back = opts.databaseBackAt ?? null;
  const attempts = opts.renewalAttempts ?? new Map<string, number>();
  const renewing = (h: { id: string; leaseMs: number }) => Date.now() - (attempts.get(h.id) ?? -Infinity) < h.leaseMs;
  // When the lease lapses, counted from the database's return (greatest ignores the NULL of no return).
  const lapse = (db: Db) => db`greatest(lease_expires_at, ${back}::timestamptz + lease_ms * interval '1 millisecond')`;
  // A host that asked to renew lately is looked at whatever the window: once it stops asking, its lease counts
  // from its last attempt, which may be long after the lapse the database records.
  const lapsed = (await sql<{ id: string; leaseMs: number }[]>`
    SELECT id, lease_ms FROM hosts WHERE lease_expires_at < now() AND ${lapse(sql)} < now()
      AND (${windowMs}::float8 IS NULL OR ${lapse(sql)} > now() - ${windowMs}::float8 * interval '1 millisecond'
        OR id = ANY(${[...attempts.keys()]}::text[]))`)
    .filter((h) => !renewing(h)).map((h) => h.id);
  if (!lapsed.length) return { abandoned: 0, lost: 0 };
  const candidates = await sql<{ sessionId: string }[]>`
    SELECT DISTINCT e.session_id FROM executions e
      WHERE e.status = 'RUNNING' AND e.host_id = ANY(${lapsed}::text[])
    UNION
    SELECT DISTINCT j.session_id FROM jobs j
      WHERE j.status IN ('RUNNING', 'CANCELLING') AND j.host_id = ANY(${lapsed}::text[])`;
  let abandoned = 0;
  let lost = 0;
  for (const { sessionId } of candidates) {
    await sql.begin(async (tx) => {
      const lock = await lockSessionIfPresent(tx, sessionId, { skipLocked: true });
      if (!lock) return;
      // Under the session lock nothing of the session changes meanwhile: these are exactly the rows to mark,
      // once their hosts are found dead under their rows' lock.
      const [running, unfinished] = await Promise.all([
        tx<{ id: string; hostId: string }[]>`
          SELECT e.id, e.host_id FROM executions e
          WHERE e.session_id = ${sessionId} AND e.status = 'RUNNING' AND e.host_id = ANY(${lapsed}::text[]) ORDER BY e.id`,
        tx<{ id: string; hostId: string }[]>`
          SELECT j.id, j.host_id FROM jobs j
          WHERE j.session_id = ${sessionId} AND j.status IN ('RUNNING', 'CANCELLING') AND j.host_id = ANY(${lapsed}::text[]) ORDER BY j.id`,
      ]);
      const hosts = [...new Set([...running, ...unfinished].map((r) => r.hostId))].sort();
      if (!hosts.length) return;
      let dead: Set<string>;
      try {
        await tx.unsafe(`SET LOCAL lock_timeout = ${HOST_ROW_WAIT_MS}; SET LOCAL statement_timeout = ${HOST_STATEMENT_MS}`);
        dead = new Set((await tx<{ id: string; leaseMs: number }[]>`
          SELECT id, lease_ms FROM hosts WHERE id = ANY(${hosts}::text[]) AND lease_expires_at < now() AND ${lapse(tx)} < now()
          ORDER BY id FOR SHARE`).filter((h) => !renewing(h)).map((h) => h.id));
      } catch (e) {
        throw hostRowBusy(e);
      }
      const execs = running.filter((e) => dead.has(e.hostId));
      const jobs = unfinished.filter((j) => dead.has(j.hostId));
      for (const j of jobs) await commitEvent(lock, 'job.lost', { jobID: j.id, hostID: j.hostId });
      for (const e of execs) {
        const { result } = await commitEvent(lock, 'execution.abandoned', { executionID: e.id, hostID: e.hostId });
        // Staged in the settlement log; the sequencer gives it its position once this commits.
        await recordSettlement(tx, { sessionId, executionId: e.id, status: 'ABANDONED', directory: lock.session.directory, settledAt: result.settledAt! });
      }
      abandoned += execs.length;
      lost += jobs.length;
    });
  }
  return { abandoned, lost };
}
