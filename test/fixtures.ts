import { expect } from 'vitest';
import type { TestGateway } from './harness.js';
import type { Sql } from '../db/connection.js';

/** Small GraphQL helpers for tests: each returns the root field's value and fails loudly on GraphQL errors. */
export async function ok<T = any>(g: TestGateway, query: string, variables?: Record<string, unknown>, token?: string): Promise<T> {
  const r = await g.gql(query, variables, token);
  if (r.errors?.length) throw new Error(`GraphQL errors: ${JSON.stringify(r.errors)}`);
  return Object.values(r.data as object)[0] as T;
}

const ERROR_FIELDS: Record<string, string> = {
  SessionNotFoundError: 'sessionID', SessionBusyError: 'sessionID executionID', SessionSealedError: 'sessionID',
  InvalidRequestError: 'field', HostNotFoundError: 'hostID', JobNotFoundError: 'jobID', ExecutionNotFoundError: 'executionID',
};
/** `__typename`, the Error interface and the fields of the named error members of a result union. */
export function result(...errors: string[]): string {
  return `__typename ... on Error { message code } ${errors.map((e) => `... on ${e} { ${ERROR_FIELDS[e]} }`).join(' ')}`;
}
const SESSION_ERRORS = result('SessionNotFoundError', 'InvalidRequestError');
const HOST_ERRORS = result('HostNotFoundError', 'InvalidRequestError');
const BEGIN_ERRORS = result('SessionBusyError', 'SessionSealedError', 'SessionNotFoundError', 'HostNotFoundError', 'InvalidRequestError');
const SETTLE_ERRORS = result('ExecutionNotFoundError', 'InvalidRequestError');
const START_JOB_ERRORS = result('SessionSealedError', 'SessionNotFoundError', 'HostNotFoundError', 'InvalidRequestError');
const APPEND_ERRORS = result('SessionSealedError', 'SessionNotFoundError', 'InvalidRequestError');

export async function createSession(g: TestGateway, input: Record<string, unknown>, token?: string) {
  return ok(g, `mutation($input: CreateSessionInput!) { createSession(input: $input) { ${SESSION_ERRORS} ... on Session { id parentID directory title metadata status } } }`, { input }, token);
}

export async function registerHost(g: TestGateway, opts: { leaseMs?: number; cancel?: boolean; hostID?: string; token?: string } = {}) {
  const token = opts.token ?? (await g.token('host'));
  const h = await ok(g, `mutation($input: RegisterHostInput!) { registerHost(input: $input) { ${HOST_ERRORS} ... on Host { id leaseExpiresAt } } }`, {
    input: { name: 'test-host', leaseMs: opts.leaseMs ?? 30_000, capabilities: { cancel: opts.cancel ?? true }, hostID: opts.hostID },
  }, token);
  expect(h.__typename).toBe('Host');
  return { hostID: h.id as string, token };
}

export async function begin(g: TestGateway, host: { hostID: string; token: string }, sessionID: string, trigger = 'PROMPT') {
  return ok(g, `mutation($input: BeginExecutionInput!) { beginExecution(input: $input) { ${BEGIN_ERRORS} ... on Execution { id sequence status } } }`, {
    input: { sessionID, hostID: host.hostID, trigger },
  }, host.token);
}

export async function settle(g: TestGateway, host: { token: string }, executionID: string, status = 'SUCCEEDED', extra: Record<string, unknown> = {}) {
  return ok(g, `mutation($input: SettleExecutionInput!) { settleExecution(input: $input) { ${SETTLE_ERRORS} ... on Execution { id status settledAt interruptReason } } }`, {
    input: { executionID, status, ...extra },
  }, host.token);
}

export async function startJob(g: TestGateway, host: { hostID: string; token: string }, sessionID: string, extra: Record<string, unknown> = {}) {
  return ok(g, `mutation($input: StartJobInput!) { startJob(input: $input) { ${START_JOB_ERRORS} ... on Job { id status background } } }`, {
    input: { sessionID, hostID: host.hostID, kind: 'SHELL', title: 'job', command: 'sleep 1', ...extra },
  }, host.token);
}

export async function appendText(g: TestGateway, host: { token: string }, sessionID: string, text: string, extra: Record<string, unknown> = {}) {
  return ok(g, `mutation($input: AppendMessageInput!) { appendMessage(input: $input) { ${APPEND_ERRORS} ... on Message { id parts { id } } } }`, {
    input: { sessionID, role: 'USER', origin: 'PROMPT', parts: [{ type: 'TEXT', text }], ...extra },
  }, host.token);
}

/** Counts rows of the tables a failed mutation must leave untouched. */
export async function snapshotCounts(g: TestGateway) {
  // One count per statement: also on a cluster, where each is a query of its own across the shards.
  const count = async (table: string) => Number((await g.sql.unsafe(`SELECT count(*)::int AS n FROM ${table}`))[0].n);
  const tables = ['sessions', 'session_children', 'executions', 'messages', 'parts', 'jobs', 'journal', 'tombstones', 'settlements'] as const;
  const counts = await Promise.all(tables.map(count));
  const r = Object.fromEntries(tables.map((t, i) => [t, counts[i]])) as Record<(typeof tables)[number], number> & { seqs: number };
  r.seqs = Number((await g.sql`SELECT coalesce(sum(last_seq), 0)::int AS n FROM sessions`)[0].n);
  return r;
}

/**
 * The lease clock moved past the host's lease: its expiry is set just before the database's `now()`,
 * which every lease check reads (domain/hosts.ts), exactly as if its lease time had passed without a
 * renewal. Tests of a lapsed lease use it instead of a short lease and a wait.
 */
export async function lapseLease(sql: Sql, hostID: string): Promise<void> {
  const r = await sql`UPDATE hosts SET lease_expires_at = now() - interval '1 millisecond' WHERE id = ${hostID} RETURNING id`;
  if (r.length !== 1) throw new Error(`lapseLease: no host ${hostID}`);
}
