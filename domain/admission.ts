import type { Sql, Tx } from '../db/connection.js';
import type { Actor } from './access.js';
import { acknowledge, issueCommand, type HostCommandRow } from './commands.js';
import { InvalidRequestError } from './errors.js';
import { requireAdmissionsOpen } from './admission-rule.js';
import { requireHost } from './hosts.js';
import { requireIdle, runningExecution } from './busy-rule.js';
import { promptCommand } from './review-comments.js';
import { newId } from './ids.js';
import { commitEvent } from './events/commit.js';
import { lockSession, lockSessionIfPresent } from './session-lock.js';
import { checkText, requireId } from './validate.js';

/**
 * Admission through a host's front (migration 013). A host that fronts its runtime (the
 * OpenCode admission proxy: OpenCode is reachable only through it) asks `admitWork` before it forwards
 * a request that can start work in a session. The check is beginExecution's: the session row lock,
 * then the seal. So a request admitted here committed before the seal's first commit, and one asked
 * after it is refused with SessionSealedError.
 *
 * A request admitted just before the seal may still be on its way to the runtime. The admission stays
 * open until the host has quiesced the session: the seal issues one CLOSE_ADMISSIONS command per host
 * with open admissions, the host stops forwarding, waits for what it forwarded, aborts the session,
 * waits until the runtime reports it idle and acknowledges; the acknowledgement closes the host's
 * admissions of that session (and wakes the seal through the journal). Until then the seal is pending.
 */

export interface AdmissionRow {
  id: string;
  sessionId: string;
  hostId: string;
  route: string;
  admittedAt: Date;
  closedAt: Date | null;
}

export interface AdmitWorkInput {
  sessionID: string;
  hostID: string;
  route: string;
  /**
   * The PROMPT command (sendReviewComments) the admitted request carries out: checked to be an open PROMPT of this
   * session sent to this host, with the session idle. The execution it starts links it: beginExecution with the
   * same commandID.
   */
  commandID?: string | null;
}

export async function admitWork(sql: Sql, actor: Actor, input: AdmitWorkInput): Promise<AdmissionRow> {
  const sessionID = requireId('session', input.sessionID, 'sessionID');
  const hostID = requireId('host', input.hostID, 'hostID');
  const route = checkText(input.route ?? '', 'route', 500, { nonEmpty: true });
  const commandID = input.commandID == null ? null : requireId('command', input.commandID, 'commandID');
  return sql.begin(async (tx) => {
    const s = (await lockSession(tx, actor, sessionID)).session;
    requireAdmissionsOpen(s);
    const h = await requireHost(tx, actor, hostID, { live: true });
    if (commandID !== null) {
      requireIdle(sessionID, await runningExecution(tx, sessionID));
      await promptCommand(tx, sessionID, hostID, commandID);
    }
    if (!h.exclusiveAdmission) {
      throw new InvalidRequestError('hostID', `Host ${hostID} does not declare capabilities.exclusiveAdmission: it admits work without the gateway, so admitWork proves nothing for it.`);
    }
    const [a] = await tx<AdmissionRow[]>`
      INSERT INTO admissions (id, session_id, host_id, route) VALUES (${newId('admission', sessionID)}, ${sessionID}, ${hostID}, ${route})
      RETURNING *`;
    return a;
  });
}

/**
 * Part of a seal step (under the session lock, admissions already closed): asks every host with open
 * admissions of the session to quiesce it, once. Answers the hosts still to be heard from.
 */
export async function requestAdmissionClose(tx: Tx, sessionID: string): Promise<string[]> {
  const open = await tx<{ hostId: string; asked: boolean }[]>`
    SELECT a.host_id, EXISTS (SELECT 1 FROM host_commands c WHERE c.session_id = ${sessionID} AND c.host_id = a.host_id
      AND c.kind = 'CLOSE_ADMISSIONS' AND c.acknowledged_at IS NULL) AS asked
    FROM admissions a WHERE a.session_id = ${sessionID} AND a.closed_at IS NULL GROUP BY a.host_id ORDER BY a.host_id`;
  for (const o of open) {
    if (o.asked) continue;
    await issueCommand(tx, { hostId: o.hostId, sessionId: sessionID, kind: 'CLOSE_ADMISSIONS' });
  }
  return open.map((o) => o.hostId);
}

/** The host acknowledges CLOSE_ADMISSIONS: it has quiesced the session, so its admissions there are closed. */
export async function closeAdmissions(sql: Sql, _actor: Actor, c: HostCommandRow): Promise<HostCommandRow> {
  return sql.begin(async (tx) => {
    const lock = await lockSessionIfPresent(tx, c.sessionId);
    const u = (await acknowledge(tx, c.id))!;
    if (!lock || c.acknowledgedAt) return u;
    const closed = await tx`
      -- Every open one: none is granted once the seal has begun, and this command was issued after that.
      UPDATE admissions SET closed_at = statement_timestamp()
      WHERE session_id = ${c.sessionId} AND host_id = ${c.hostId} AND closed_at IS NULL
      RETURNING id`;
    await commitEvent(lock, 'session.admissions_closed', { hostID: c.hostId, commandID: c.id, closed: closed.length });
    return u;
  });
}
