import { expect } from 'vitest';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestGateway } from '../harness.js';
import type { ReferenceHost } from '../../host/host.js';
import type { WorktreeCapturer } from '../../host/capture.js';
import { GatewayCallError } from '../../client/index.js';

/** Everything an execution's frozen changeset reads as, for assertions. */
export const CHANGESET = `
  fragment CS on Execution {
    id status
    boundary { __typename ... on SnapshotBoundary { start { id fileCount byteSize } end { id fileCount byteSize } } ... on BoundaryUnavailable { reason detail } }
    changeset {
      fileCount additions deletions patch
      coverage { __typename ... on CoverageComplete { fileCount } ... on CoverageOmitted { omissions { path reason detail } } ... on CoverageUnavailable { reason detail } }
      files { path status additions deletions binary patch }
    }
  }`;

export function write(root: string, p: string, c: string | Buffer) {
  mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
  writeFileSync(path.join(root, p), c);
}

export async function errorOf(p: Promise<unknown>): Promise<any> {
  try { await p; } catch (e) { if (e instanceof GatewayCallError) return e.error; throw e; }
  throw new Error('expected a typed error');
}

/**
 * Helpers of the changeset tests, over the file's gateway and reference host (read lazily, since
 * both are created in beforeAll). Temporary worktrees are collected in `dirs` for cleanup.
 */
export function changesetKit(ctx: () => { g: TestGateway; host: ReferenceHost }, dirs: string[]) {
  return {
    worktree(files: Record<string, string | Buffer> = {}): string {
      const d = mkdtempSync(path.join(tmpdir(), 'gw-cs-'));
      dirs.push(d);
      for (const [p, c] of Object.entries(files)) write(d, p, c);
      return d;
    },
    async newSession(): Promise<string> {
      const r = await ctx().g.gql(`mutation { createSession(input: { title: "cs", directory: "/w/cs" }) { ... on Session { id } } }`);
      return r.data.createSession.id;
    },
    async read(executionID: string) {
      const r = await ctx().g.gql(`query($id: ID!) { execution(id: $id) { ...CS } } ${CHANGESET}`, { id: executionID });
      expect(r.errors).toBeUndefined();
      return r.data.execution;
    },
    /** One execution: snapshot, begin, mutate the worktree, snapshot, settle. */
    async runExecution(sessionID: string, root: string, cap: WorktreeCapturer, edit: () => void | Promise<void>) {
      const { host } = ctx();
      const start = await cap.snapshot(host.client, sessionID, root, host.id);
      const e: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: start.id });
      await edit();
      const end = await cap.snapshot(host.client, sessionID, root, host.id);
      await host.settleExecution(e.id, 'SUCCEEDED', { endSnapshot: end.id });
      return { id: e.id as string, start, end };
    },
    count: async (table: string) => Number((await ctx().g.sql.unsafe(`SELECT count(*) AS n FROM ${table}`))[0].n),
  };
}
