import type { Sql } from '../../db/connection.js';
import { newId } from '../../domain/ids.js';

const EXECUTIONS = 8;

/**
 * The data of bench/reads.ts, written directly as rows: SESSIONS sessions of 8 settled executions
 * (a 3-file changeset each), and in the first session one execution with a 50-file changeset (with
 * an omission) and one with 500 files and their patches. IDs are the gateway's own (a session's rows
 * carry its session), created in order, so the sessions sort newest first by ID as the API lists them.
 */
export interface SeededReads {
  e50: string;
  e500: string;
  /** The sessions' IDs, oldest first. */
  sessions: string[];
  /** Each session's executions' IDs, by sequence (executions[i][q - 1]). */
  executions: string[][];
}

export async function seedReads(sql: Sql, SESSIONS: number): Promise<SeededReads> {
  await sql`INSERT INTO hosts (id, name, lease_ms, lease_expires_at) VALUES ('hst_bench', 'bench', 600000, now() + interval '1 day')`;
  const t0 = Date.UTC(2026, 0, 1);
  const pad = (i: number) => String(i).padStart(6, '0');
  const sessions = Array.from({ length: SESSIONS }, (_, i) => ({
    id: newId('session'), title: `session ${i}`, directory: `/bench/reads/${i % 7}`, host_id: 'hst_bench',
    execution_count: EXECUTIONS, created_at: new Date(t0 + i * 60_000), updated_at: new Date(t0 + i * 60_000),
  }));
  await sql`INSERT INTO sessions ${sql(sessions)}`;
  const execs: any[] = [];
  const executions: string[][] = sessions.map(() => []);
  const cs: any[] = [];
  const files: any[] = [];
  for (const [i, s] of sessions.entries()) {
    for (let q = 1; q <= EXECUTIONS; q++) {
      const id = newId('execution', s.id);
      executions[i].push(id);
      const started = new Date(t0 + i * 60_000 + q * 1_000);
      execs.push({ id, session_id: s.id, sequence: q, host_id: 'hst_bench', status: q % 5 === 0 ? 'FAILED' : 'SUCCEEDED', trigger: 'PROMPT',
        started_at: started, settled_at: new Date(started.getTime() + 500) });
      cs.push({ execution_id: id, session_id: s.id, coverage: 'COMPLETE', file_count: 3, additions: 3 * q, deletions: q, patch_bytes: 300 });
      for (let f = 0; f < 3; f++) files.push({ execution_id: id, session_id: s.id, ord: f, path: `src/f${f}.ts`, status: 'MODIFIED', additions: q, deletions: f, binary: false, patch: `diff --git a/src/f${f}.ts b/src/f${f}.ts\n` });
    }
  }
  const big = sessions[0].id;
  const bigFiles = (id: string, n: number, patchLines: number) => Array.from({ length: n }, (_, f) => {
    const path = `pkg/m${Math.floor(f / 50)}/file${pad(f)}.ts`;
    const body = Array.from({ length: patchLines }, (_, l) => `-export const v${l} = ${l};\n+export const v${l} = ${l + f};\n`).join('');
    return { execution_id: id, session_id: big, ord: f, path, status: f % 10 === 0 ? 'ADDED' : 'MODIFIED', additions: patchLines, deletions: f % 10 === 0 ? 0 : patchLines,
      binary: false, patch: `diff --git a/${path} b/${path}\n--- a/${path}\n+++ b/${path}\n@@ -1,${patchLines} +1,${patchLines} @@\n${body}` };
  });
  const e50 = newId('execution', big), e500 = newId('execution', big);
  for (const [id, n, seq] of [[e50, 50, 101], [e500, 500, 102]] as const) {
    execs.push({ id, session_id: big, sequence: seq, host_id: 'hst_bench', status: 'SUCCEEDED', trigger: 'PROMPT', started_at: new Date(t0), settled_at: new Date(t0 + 1_000) });
    const fs = bigFiles(id, n, 12);
    cs.push({ execution_id: id, session_id: big, coverage: n === 50 ? 'OMITTED' : 'COMPLETE', file_count: n,
      additions: fs.reduce((a, f) => a + f.additions, 0), deletions: fs.reduce((a, f) => a + f.deletions, 0), patch_bytes: fs.reduce((a, f) => a + f.patch.length, 0) });
    files.push(...fs);
  }
  for (let i = 0; i < execs.length; i += 500) await sql`INSERT INTO executions ${sql(execs.slice(i, i + 500))}`;
  for (let i = 0; i < cs.length; i += 500) await sql`INSERT INTO changesets ${sql(cs.slice(i, i + 500))}`;
  for (let i = 0; i < files.length; i += 500) await sql`INSERT INTO changeset_files ${sql(files.slice(i, i + 500))}`;
  const omissions = [{ path: 'assets/logo.png', reason: 'BINARY', detail: 'binary content, 20480 bytes' }];
  await sql`UPDATE changesets SET omissions = ${sql.json(omissions)} WHERE execution_id = ${e50}`;
  // Vacuumed and analysed now: autovacuum, woken by the inserts, would otherwise run during the first
  // measured query (its CPU counted as the servers' PostgreSQL CPU) and the plans would change under it.
  await sql`VACUUM ANALYZE`;
  // And the seed's dirty pages written out now, not by a checkpoint during the measured runs (needs a
  // superuser or pg_checkpoint; without it the figures of the first query may include one).
  await sql`CHECKPOINT`.catch(() => {});
  return { e50, e500, sessions: sessions.map((s) => s.id), executions };
}

