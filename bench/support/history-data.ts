import type { Sql } from '../../db/connection.js';

/** What `seedHistory` wrote. */
export interface SeededHistory { sessions: number; executions: number; messages: number; parts: number; changesetFiles: number; seconds: number }

/**
 * An older history under the data of bench/reads (support/reads-data.ts): `sessions` sessions written
 * before it (their IDs and times older, so a list of the newest sessions reads the same rows as on a
 * small history), each with 1 to 31 settled executions (16 on average), each execution with a
 * 3-file changeset and two messages (the prompt and the answer) of 5 parts each. Set-based (INSERT …
 * SELECT over generate_series, one statement per table), so 20,000 sessions take minutes, not hours.
 * IDs have the gateway's shape (domain/ids.ts: a stamp then characters of the base62 alphabet; a
 * session's rows carry their session). Needs the host `hst_bench` (seedReads writes it first).
 */
export async function seedHistory(sql: Sql, sessions: number): Promise<SeededHistory> {
  const t = Date.now();
  // A year before the small history's sessions (support/reads-data.ts starts at 2026-01-01), a minute apart.
  const base = Date.UTC(2025, 0, 1);
  const stamp = (ms: string) => `lpad(to_hex(${ms}), 11, '0') || '000'`;
  await sql.unsafe(`
    INSERT INTO sessions (id, title, directory, host_id, execution_count, created_at, updated_at)
    SELECT 'ses_' || ${stamp(`${base}::bigint + i * 60000`)} || substr(md5(i::text), 1, 12),
           'history ' || i, '/bench/history/' || (i % 7), 'hst_bench', 1 + (i * 7919) % 31,
           to_timestamp((${base}::bigint + i * 60000) / 1000.0), to_timestamp((${base}::bigint + i * 60000 + 50000) / 1000.0)
    FROM generate_series(1, ${Number(sessions)}) i`);
  // The sessions of this history: those under /bench/history/.
  const own = `s.directory LIKE '/bench/history/%'`;
  const exe = (prefix: string, n: string) => `'${prefix}_' || substr(s.id, 5) || ${stamp(`(extract(epoch FROM s.created_at) * 1000)::bigint + ${n}`)} || substr(md5(s.id || '${prefix}' || ${n}), 1, 4)`;
  await sql.unsafe(`
    INSERT INTO executions (id, session_id, sequence, host_id, status, trigger, started_at, settled_at, model_id, input_tokens, output_tokens)
    SELECT ${exe('exe', 'q')}, s.id, q, 'hst_bench', CASE WHEN q % 5 = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END, 'PROMPT',
           s.created_at + q * interval '1 second', s.created_at + q * interval '1 second' + interval '500 milliseconds', 'bench-model', 1000 + q, 200 + q
    FROM sessions s CROSS JOIN generate_series(1, s.execution_count) q WHERE ${own}`);
  await sql.unsafe(`
    INSERT INTO changesets (execution_id, session_id, coverage, file_count, additions, deletions, patch_bytes)
    SELECT x.id, x.session_id, 'COMPLETE', 3, 3 * x.sequence, x.sequence, 300
    FROM executions x JOIN sessions s ON s.id = x.session_id WHERE ${own}`);
  await sql.unsafe(`
    INSERT INTO changeset_files (execution_id, session_id, ord, path, status, additions, deletions, "binary", patch)
    SELECT x.id, x.session_id, f, 'src/f' || f || '.ts', 'MODIFIED', x.sequence, f, false, 'diff --git a/src/f' || f || '.ts b/src/f' || f || '.ts' || chr(10)
    FROM executions x JOIN sessions s ON s.id = x.session_id CROSS JOIN generate_series(0, 2) f WHERE ${own}`);
  // Two messages per execution: the prompt (position 2q-1) and the answer (2q).
  await sql.unsafe(`
    INSERT INTO messages (id, session_id, execution_id, position, role, origin, created_at)
    SELECT ${exe('msg', '(2 * x.sequence - 2 + m)')}, x.session_id, x.id, 2 * x.sequence - 2 + m,
           CASE m WHEN 1 THEN 'USER' ELSE 'ASSISTANT' END, CASE m WHEN 1 THEN 'PROMPT' ELSE 'MODEL' END, x.started_at
    FROM executions x JOIN sessions s ON s.id = x.session_id CROSS JOIN generate_series(1, 2) m WHERE ${own}`);
  await sql.unsafe(`
    INSERT INTO parts (id, message_id, session_id, index, type, text)
    SELECT 'prt_' || substr(m.id, 5, 40) || lpad(to_hex(k), 3, '0') || substr(md5(m.id || k), 1, 5), m.id, m.session_id, k, 'TEXT',
           'part ' || k || ' of ' || m.id || ': some words the agent wrote about the change it made and why'
    FROM messages m JOIN sessions s ON s.id = m.session_id CROSS JOIN generate_series(0, 4) k WHERE ${own}`);
  const [c] = await sql<{ executions: number; messages: number; parts: number; files: number }[]>`
    SELECT (SELECT count(*)::int FROM executions) AS executions, (SELECT count(*)::int FROM messages) AS messages,
           (SELECT count(*)::int FROM parts) AS parts, (SELECT count(*)::int FROM changeset_files) AS files`;
  await sql`VACUUM ANALYZE`;
  await sql`CHECKPOINT`.catch(() => {});
  return { sessions, executions: c.executions, messages: c.messages, parts: c.parts, changesetFiles: c.files, seconds: (Date.now() - t) / 1000 };
}
