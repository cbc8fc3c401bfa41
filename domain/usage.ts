import type { Db } from '../db/connection.js';
import { isDistributed } from '../db/cluster.js';
import { scopeCondition, type Actor } from './access.js';
import { InvalidRequestError, SessionNotFoundError } from './errors.js';
import { isId } from './ids.js';

/**
 * Usage aggregates for analytics tools (README, "Usage"): settled executions of a time range, grouped by any
 * of model, provider, agent (the host kind: the first word of the host's registered name, `opencode`,
 * `claude-code`, …), host, session, status, and the day or hour of their settlement in a time zone the caller
 * names; per group the executions by status, the token kinds, the cost the hosts reported, tool calls and
 * failed tool calls by tool, the executions' jobs by end state, and the duration (start to settlement)
 * percentiles p50 and p95.
 *
 * One statement per call, computed by the database: three parts, each a join on the session key grouped by
 * the group key (the executions with their session and host: counts, token sums and the durations; their tool
 * calls by tool; their jobs by status), so on a Citus cluster each runs on the shards and the coordinator only
 * combines them (and computes the percentiles); then the groups' lists and order. Scoped like every read: a scoped token counts only the
 * sessions under its directory. Grouped by session, the answer is paged by session (keyset on the session ID);
 * grouped by one period (DAY or HOUR) alone, periods without executions are listed with zeros.
 *
 * Every token count has one meaning on every agent (domain/executions.ts StepUsage): input tokens include the
 * cached ones, so sums across agents and models add like with like. A cost is the sum of what the agents
 * reported (OpenCode: the step's cost; Claude Code: its own accounting); executions whose agent reported none
 * (Codex) are counted apart (`reportedExecutions`), never estimated.
 */

export const USAGE_DIMENSIONS = ['MODEL', 'PROVIDER', 'AGENT', 'HOST', 'SESSION', 'STATUS', 'DAY', 'HOUR'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

export interface UsageInput {
  from: Date;
  to: Date;
  groupBy: readonly UsageDimension[];
  /** An IANA time zone (e.g. Europe/Paris) for DAY and HOUR; default UTC. */
  timeZone?: string | null;
  /** Only this session (with `subtree`: and its descendants). */
  sessionID?: string | null;
  subtree?: boolean | null;
  /** Grouped by SESSION: sessions per page (default 50, at most 100) and the cursor of the previous page. */
  first?: number | null;
  after?: string | null;
}

export interface UsageGroup {
  key: {
    providerID: string | null;
    modelID: string | null;
    agent: string | null;
    hostID: string | null;
    sessionID: string | null;
    status: string | null;
    /** The start of the period (DAY or HOUR), as an instant, and as local wall-clock text in the time zone. */
    periodStart: Date | null;
    period: string | null;
  };
  executions: { total: number; succeeded: number; failed: number; interrupted: number; abandoned: number };
  tokens: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number };
  cost: { total: number | null; reportedExecutions: number };
  toolCalls: { total: number; failed: number; byTool: { tool: string; calls: number; failed: number }[] };
  jobs: { total: number; completed: number; error: number; cancelled: number; lost: number; unfinished: number };
  duration: { p50Ms: number | null; p95Ms: number | null };
}

export interface UsagePage {
  groups: UsageGroup[];
  hasNextPage: boolean;
  endCursor: string | null;
}

/** Groups of an answer not paged by session: more is a bad request (a narrower range or fewer dimensions). */
export const MAX_USAGE_GROUPS = 5000;
/** Periods listed with zeros (one period dimension alone): the range may cover at most this many days. */
const MAX_FILL_DAYS = 400;
const DEFAULT_PAGE = 50;
const MAX_PAGE = 100;

const CURSOR_PREFIX = 'v1:usage-session:';
export const usageCursor = (sessionID: string) => Buffer.from(CURSOR_PREFIX + sessionID).toString('base64url');
function decodeUsageCursor(after: string): string {
  const text = Buffer.from(after, 'base64url').toString('utf8');
  const id = text.startsWith(CURSOR_PREFIX) ? text.slice(CURSOR_PREFIX.length) : '';
  if (!isId('session', id)) throw new InvalidRequestError('after', 'after is not a cursor of this list.');
  return id;
}

/** Whether `tz` is a time zone name this process knows (the database is asked too: its error is mapped). */
function checkTimeZone(tz: string): string {
  if (tz.length > 64 || !/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(tz)) throw new InvalidRequestError('timeZone', 'timeZone must be an IANA time zone name such as Europe/Paris.');
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
  } catch {
    throw new InvalidRequestError('timeZone', `timeZone "${tz}" is not a known time zone.`);
  }
  return tz;
}

function checkInput(input: UsageInput) {
  const from = input.from;
  const to = input.to;
  if (!(from instanceof Date) || Number.isNaN(from.getTime())) throw new InvalidRequestError('from', 'from must be an instant.');
  if (!(to instanceof Date) || Number.isNaN(to.getTime())) throw new InvalidRequestError('to', 'to must be an instant.');
  if (to <= from) throw new InvalidRequestError('to', 'to must be after from.');
  const groupBy = [...input.groupBy];
  for (const d of groupBy) if (!USAGE_DIMENSIONS.includes(d)) throw new InvalidRequestError('groupBy', `groupBy has an unknown dimension ${String(d)}.`);
  if (new Set(groupBy).size !== groupBy.length) throw new InvalidRequestError('groupBy', 'groupBy names a dimension twice.');
  if (groupBy.includes('DAY') && groupBy.includes('HOUR')) throw new InvalidRequestError('groupBy', 'groupBy takes DAY or HOUR, not both.');
  const timeZone = checkTimeZone(input.timeZone ?? 'UTC');
  let sessionID: string | null = null;
  if (input.sessionID != null) {
    if (!isId('session', input.sessionID)) throw new InvalidRequestError('sessionID', 'sessionID is not a session ID.');
    sessionID = input.sessionID;
  }
  if (input.subtree && !sessionID) throw new InvalidRequestError('subtree', 'subtree needs a sessionID.');
  const paged = groupBy.includes('SESSION');
  const first = input.first ?? DEFAULT_PAGE;
  if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE) throw new InvalidRequestError('first', `first must be an integer from 1 to ${MAX_PAGE}.`);
  if (!paged && input.after != null) throw new InvalidRequestError('after', 'after pages an answer grouped by SESSION only.');
  const after = paged && input.after != null ? decodeUsageCursor(input.after) : null;
  const period = groupBy.includes('DAY') ? 'day' : groupBy.includes('HOUR') ? 'hour' : null;
  const fill = period !== null && groupBy.length === 1;
  if (fill && to.getTime() - from.getTime() > MAX_FILL_DAYS * 86_400_000) {
    throw new InvalidRequestError('to', `grouped by ${groupBy[0]} alone, the range covers at most ${MAX_FILL_DAYS} days.`);
  }
  return { from, to, groupBy, timeZone, sessionID, subtree: !!input.subtree, paged, first, after, period, fill };
}

/** The sessions of a subtree level by level (a Citus cluster has no recursive CTE over distributed tables). */
async function subtreeOf(db: Db, sessionID: string): Promise<string[]> {
  const all = [sessionID];
  let level = [sessionID];
  while (level.length) {
    const rows = await db<{ childId: string }[]>`SELECT child_id FROM session_children WHERE parent_id = ANY(${level})`;
    level = rows.map((r) => r.childId).filter((id) => !all.includes(id));
    all.push(...level);
  }
  return all;
}

export async function usage(db: Db, actor: Actor, raw: UsageInput): Promise<UsagePage> {
  const q = checkInput(raw);
  const tz = q.timeZone;
  // Which sessions count: one, its subtree (a recursive CTE in the statement; level by level on a cluster), or all.
  const clusterTree = q.sessionID && q.subtree && isDistributed(db) ? await subtreeOf(db, q.sessionID) : null;
  const recursive = !!(q.sessionID && q.subtree && !clusterTree);
  const tree = recursive
    ? db`tree(id) AS (SELECT ${q.sessionID}::text UNION SELECT c.child_id FROM session_children c JOIN tree t ON c.parent_id = t.id),`
    : db``;
  const sessionFilter = !q.sessionID ? db``
    : clusterTree ? db`AND e.session_id = ANY(${clusterTree})`
      : recursive ? db`AND e.session_id IN (SELECT id FROM tree)`
        : db`AND e.session_id = ${q.sessionID}`;
  // The executions that count, as a condition on executions e joined to sessions s.
  const base = db`e.settled_at >= ${q.from} AND e.settled_at < ${q.to} AND e.status <> 'RUNNING'
    AND ${scopeCondition(db, actor, 's.directory')} ${sessionFilter}`;
  const page = q.paged
    ? db`page AS MATERIALIZED (
        SELECT DISTINCT e.session_id FROM executions e JOIN sessions s ON s.id = e.session_id
        WHERE ${base} ${q.after ? db`AND e.session_id > ${q.after}` : db``}
        ORDER BY e.session_id LIMIT ${q.first + 1}),
      shown AS MATERIALIZED (SELECT session_id FROM page ORDER BY session_id LIMIT ${q.first}),`
    : db``;
  const where = q.paged ? db`${base} AND e.session_id IN (SELECT session_id FROM shown)` : base;

  // The group key: the expressions of the dimensions asked for (over executions e and hosts h), in the caller's
  // order (also the order of the groups). Each part below (sums and durations, tool calls, jobs) is a join on
  // the session key grouped by these: on a Citus cluster each shard aggregates its sessions' rows and the
  // coordinator combines the partial counts and sums (and the duration arrays, whose percentiles it computes).
  const exprOf = (c: string) => {
    switch (c) {
      case 'provider_id': return db`e.provider_id`;
      case 'model_id': return db`e.model_id`;
      case 'agent': return db`split_part(h.name, ' ', 1)`;
      case 'host_id': return db`e.host_id`;
      case 'session_id': return db`e.session_id`;
      case 'status': return db`e.status`;
      default: return db`date_trunc(${q.period}, e.settled_at AT TIME ZONE ${tz})`;
    }
  };
  const keyCols: Record<UsageDimension, string[]> = {
    MODEL: ['provider_id', 'model_id'], PROVIDER: ['provider_id'], AGENT: ['agent'], HOST: ['host_id'],
    SESSION: ['session_id'], STATUS: ['status'], DAY: ['period'], HOUR: ['period'],
  };
  const cols = [...new Set(q.groupBy.flatMap((d) => keyCols[d]))];
  const join = (parts: ReturnType<typeof db>[], sep: string) => parts.reduce((acc, p, i) => (i ? db`${acc}${db.unsafe(sep)}${p}` : p), db``);
  // `k_<col>` columns (computed in a subquery `x`, grouped by name: a parameter written twice would be two
  // expressions to the planner) and `gk`, a text of them all (NULL-safe to join on; "C" collation: a byte sort).
  const keyExprs = cols.length ? db`, ${join(cols.map((c) => db`${exprOf(c)} AS ${db('k_' + c)}`), ', ')}` : db``;
  const keySelect = cols.length ? db`${db.unsafe(cols.map((c) => `x.k_${c}`).join(', '))},` : db``;
  const keyGroupLead = cols.length ? db.unsafe(cols.map((c) => `x.k_${c}`).join(', ') + ',') : db``;
  // (Without a dimension: one group, or none when nothing counts.)
  const keyGroupOnly = cols.length ? db.unsafe('GROUP BY ' + cols.map((c) => `x.k_${c}`).join(', ')) : db``;
  const gkOf = db.unsafe(cols.length ? `json_build_array(${cols.map((c) => `x.k_${c}`).join(', ')})::text COLLATE "C"` : `'[]'::text COLLATE "C"`);
  const keyMins = cols.length ? db`${join(cols.map((c) => db`min(${db('k_' + c)}) AS ${db('k_' + c)}`), ', ')},` : db``;
  const orderBy = db.unsafe(cols.length ? cols.map((c) => `g.k_${c} NULLS LAST`).join(', ') : '1');
  const groupCols = (c: string) => (cols.includes(c) ? db.unsafe(`g.k_${c}`) : db.unsafe('NULL'));
  const periodLabel = q.period === 'hour' ? `'YYYY-MM-DD"T"HH24:00'` : `'YYYY-MM-DD'`;

  const groups = q.fill
    // One period dimension alone: every period the range touches, zeros where nothing settled. The periods are
    // those of the instants every 15 minutes from `from`, and of the range's last instant (every UTC offset is
    // a multiple of 15 minutes, so no local hour or day is missed).
    ? db`periods AS (
        SELECT DISTINCT date_trunc(${q.period}, i AT TIME ZONE ${tz}) AS period
        FROM (SELECT generate_series(${q.from}::timestamptz, ${q.to}::timestamptz - interval '1 microsecond', interval '15 minutes') AS i
              UNION ALL SELECT ${q.to}::timestamptz - interval '1 microsecond') instants),
      g AS (
        SELECT p.period AS k_period, json_build_array(p.period)::text COLLATE "C" AS gk, coalesce(a.n, 0) AS n, coalesce(a.succeeded, 0) AS succeeded,
          coalesce(a.failed, 0) AS failed, coalesce(a.interrupted, 0) AS interrupted, coalesce(a.abandoned, 0) AS abandoned,
          coalesce(a.input, 0) AS input, coalesce(a.output, 0) AS output, coalesce(a.reasoning, 0) AS reasoning,
          coalesce(a.cache_read, 0) AS cache_read, coalesce(a.cache_write, 0) AS cache_write, a.cost, coalesce(a.cost_reported, 0) AS cost_reported,
          a.p50, a.p95
        FROM periods p LEFT JOIN agg a ON a.gk = json_build_array(p.period)::text COLLATE "C"),`
    : db`g AS (SELECT * FROM agg),`;

  const statement = db`
    WITH ${recursive ? db`RECURSIVE` : db``} ${tree} ${page}
    per_key AS MATERIALIZED (
      SELECT ${keySelect} ${gkOf} AS gk, count(*) AS n,
        count(*) FILTER (WHERE x.status = 'SUCCEEDED') AS succeeded, count(*) FILTER (WHERE x.status = 'FAILED') AS failed,
        count(*) FILTER (WHERE x.status = 'INTERRUPTED') AS interrupted, count(*) FILTER (WHERE x.status = 'ABANDONED') AS abandoned,
        sum(x.input_tokens) AS input, sum(x.output_tokens) AS output, sum(x.reasoning_tokens) AS reasoning,
        sum(x.cache_read_tokens) AS cache_read, sum(x.cache_write_tokens) AS cache_write, sum(x.cost) AS cost, count(x.cost) AS cost_reported,
        array_agg(x.duration_ms) AS durations
      FROM (
        SELECT e.session_id, e.status, e.input_tokens, e.output_tokens, e.reasoning_tokens, e.cache_read_tokens,
          e.cache_write_tokens, e.cost, extract(epoch FROM e.settled_at - e.started_at) * 1000 AS duration_ms ${keyExprs}
        FROM executions e
        JOIN sessions s ON s.id = e.session_id
        LEFT JOIN hosts h ON h.id = e.host_id
        WHERE ${where}) x
      ${keyGroupOnly} HAVING count(*) > 0),
    ex_tools AS MATERIALIZED (
      SELECT ${gkOf} AS gk, x.tool, count(*) AS calls,
        count(*) FILTER (WHERE lower(x.tool_status) IN ('error', 'failed')) AS failed
      FROM (
        SELECT e.session_id, p.tool, p.status AS tool_status ${keyExprs}
        FROM parts p
        JOIN messages m ON m.session_id = p.session_id AND m.id = p.message_id
        JOIN executions e ON e.session_id = m.session_id AND e.id = m.execution_id
        JOIN sessions s ON s.id = e.session_id
        LEFT JOIN hosts h ON h.id = e.host_id
        WHERE p.type = 'TOOL' AND p.tool IS NOT NULL AND ${where}) x
      GROUP BY ${keyGroupLead} x.tool),
    ex_jobs AS MATERIALIZED (
      SELECT ${gkOf} AS gk, x.job_status AS status, count(*) AS n
      FROM (
        SELECT e.session_id, j.status AS job_status ${keyExprs}
        FROM jobs j
        JOIN executions e ON e.session_id = j.session_id AND e.id = j.execution_id
        JOIN sessions s ON s.id = e.session_id
        LEFT JOIN hosts h ON h.id = e.host_id
        WHERE ${where}) x
      GROUP BY ${keyGroupLead} x.job_status),
    sums AS (
      SELECT gk, ${keyMins} sum(n) AS n, sum(succeeded) AS succeeded, sum(failed) AS failed, sum(interrupted) AS interrupted,
        sum(abandoned) AS abandoned, coalesce(sum(input), 0) AS input, coalesce(sum(output), 0) AS output,
        coalesce(sum(reasoning), 0) AS reasoning, coalesce(sum(cache_read), 0) AS cache_read, coalesce(sum(cache_write), 0) AS cache_write,
        sum(cost) AS cost, sum(cost_reported) AS cost_reported
      FROM per_key GROUP BY gk),
    pct AS (
      SELECT ps.gk, percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY d) AS p
      FROM per_key ps, unnest(ps.durations) d GROUP BY ps.gk),
    agg AS (SELECT sums.*, pct.p[1] AS p50, pct.p[2] AS p95 FROM sums JOIN pct ON pct.gk = sums.gk),
    ${groups}
    tool_lists AS MATERIALIZED (
      SELECT gk, json_agg(json_build_object('tool', tool, 'calls', calls, 'failed', failed) ORDER BY calls DESC, tool) AS tools
      FROM (SELECT gk, tool, sum(calls) AS calls, sum(failed) AS failed FROM ex_tools GROUP BY gk, tool) tg
      GROUP BY gk),
    job_lists AS MATERIALIZED (
      SELECT gk, json_object_agg(status, n) AS jobs
      FROM (SELECT gk, status, sum(n) AS n FROM ex_jobs GROUP BY gk, status) jg
      GROUP BY gk),
    listed AS MATERIALIZED (SELECT g.*, row_number() OVER (ORDER BY ${orderBy}) AS ord FROM g)
    SELECT
      ${q.sessionID ? db`EXISTS (SELECT 1 FROM sessions s WHERE s.id = ${q.sessionID} AND ${scopeCondition(db, actor, 's.directory')})` : db`true`} AS found,
      ${q.paged ? db`(SELECT count(*) FROM page) > ${q.first}` : db`false`} AS more,
      ${q.paged ? db`(SELECT max(session_id) FROM shown)` : db`NULL::text`} AS last_session,
      (SELECT count(*) FROM listed) AS group_count,
      coalesce((SELECT json_agg(json_build_object(
        'provider_id', ${groupCols('provider_id')}, 'model_id', ${groupCols('model_id')}, 'agent', ${groupCols('agent')},
        'host_id', ${groupCols('host_id')}, 'session_id', ${groupCols('session_id')}, 'status', ${groupCols('status')},
        'period_start', ${q.period ? db`g.k_period AT TIME ZONE ${tz}` : db`NULL::timestamptz`},
        'period', ${q.period ? db`to_char(g.k_period, ${db.unsafe(periodLabel)})` : db`NULL::text`},
        'n', g.n, 'succeeded', g.succeeded, 'failed', g.failed, 'interrupted', g.interrupted, 'abandoned', g.abandoned,
        'input', g.input, 'output', g.output, 'reasoning', g.reasoning, 'cache_read', g.cache_read, 'cache_write', g.cache_write,
        'cost', g.cost, 'cost_reported', g.cost_reported, 'p50', g.p50, 'p95', g.p95,
        'tools', tl.tools, 'jobs', jl.jobs
      ) ORDER BY g.ord)
        FROM listed g LEFT JOIN tool_lists tl ON tl.gk = g.gk LEFT JOIN job_lists jl ON jl.gk = g.gk
        WHERE g.ord <= ${MAX_USAGE_GROUPS}), '[]'::json) AS groups`;

  let row: { found: boolean; more: boolean; lastSession: string | null; groupCount: number; groups: RawGroup[] };
  try {
    [row] = await (statement as unknown as Promise<typeof row[]>);
  } catch (e) {
    // The database does not know a name Node's time zone data knows.
    if ((e as { code?: string }).code === '22023' && /time zone/i.test(String((e as Error).message))) {
      throw new InvalidRequestError('timeZone', `timeZone "${tz}" is not a known time zone.`);
    }
    throw e;
  }
  if (!row.found) throw new SessionNotFoundError(q.sessionID!);
  if (!q.paged && Number(row.groupCount) > MAX_USAGE_GROUPS) {
    throw new InvalidRequestError('groupBy', `the answer has more than ${MAX_USAGE_GROUPS} groups: narrow the range, drop a dimension, or group by SESSION (paged).`);
  }
  return {
    groups: row.groups.map(groupOf),
    hasNextPage: row.more,
    endCursor: row.lastSession ? usageCursor(row.lastSession) : null,
  };
}

interface RawGroup {
  provider_id: string | null; model_id: string | null; agent: string | null; host_id: string | null; session_id: string | null;
  status: string | null; period_start: string | null; period: string | null;
  n: number; succeeded: number; failed: number; interrupted: number; abandoned: number;
  input: number; output: number; reasoning: number; cache_read: number; cache_write: number;
  cost: number | null; cost_reported: number; p50: number | null; p95: number | null;
  tools: { tool: string; calls: number; failed: number }[] | null;
  jobs: Record<string, number> | null;
}

function groupOf(r: RawGroup): UsageGroup {
  const jobs = r.jobs ?? {};
  const job = (s: string) => Number(jobs[s] ?? 0);
  const tools = (r.tools ?? []).map((t) => ({ tool: t.tool, calls: Number(t.calls), failed: Number(t.failed) }));
  return {
    key: {
      providerID: r.provider_id, modelID: r.model_id, agent: r.agent, hostID: r.host_id, sessionID: r.session_id, status: r.status,
      periodStart: r.period_start ? new Date(r.period_start) : null, period: r.period,
    },
    executions: { total: Number(r.n), succeeded: Number(r.succeeded), failed: Number(r.failed), interrupted: Number(r.interrupted), abandoned: Number(r.abandoned) },
    tokens: { input: Number(r.input), output: Number(r.output), reasoning: Number(r.reasoning), cacheRead: Number(r.cache_read), cacheWrite: Number(r.cache_write) },
    cost: { total: r.cost == null ? null : Number(r.cost), reportedExecutions: Number(r.cost_reported) },
    toolCalls: { total: tools.reduce((a, t) => a + t.calls, 0), failed: tools.reduce((a, t) => a + t.failed, 0), byTool: tools },
    jobs: {
      total: Object.values(jobs).reduce((a, n) => a + Number(n), 0),
      completed: job('COMPLETED'), error: job('ERROR'), cancelled: job('CANCELLED'), lost: job('LOST'),
      unfinished: job('RUNNING') + job('CANCELLING'),
    },
    duration: { p50Ms: r.p50 == null ? null : Number(r.p50), p95Ms: r.p95 == null ? null : Number(r.p95) },
  };
}
