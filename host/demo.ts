import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GatewayClient, GatewayCallError, GatewayConnectionError, GraphQLRequestError } from '../client/index.js';
import { CreateSessionDocument, UpdateSessionDocument } from '../client/generated.js';
import { WorktreeCapturer } from './capture.js';
import { ReferenceHost } from './host.js';
import { HOST_TOKEN, PLUGIN_TOKEN, readSecret } from '../cli/credentials.js';
import { optionsOf } from '../cli/commands.js';

/** The demo cannot run as asked: one line saying why and what to do (no stack). */
export class DemoError extends Error {}

export interface DemoResult {
  worktree: string;
  hostID: string;
  sessionID: string;
  childID: string;
  /** Execution 1 (succeeded): edits greeting.txt, adds notes.md; coverage complete. */
  changedID: string;
  /** Execution 2 (failed): edits greeting.txt and writes the ignored build.log; coverage omitted. Before it,
   *  outside any execution, the user edits README.md: its driftBefore shows that edit. */
  omittedID: string;
  /** Execution 3 (interrupted): captured at both boundaries; changes nothing (coverage complete, no files). */
  interruptedID: string;
  query: string;
  /** The review page of the root session (`<gateway>/review/#/session/<id>`), printed beside the query. */
  reviewURL: string;
}

/**
 * `GATEWAY_TOKEN=<token> npm run demo` (or `npm run demo -- --token-file <file>`): drives one session and
 * its child through the reference host against a running gateway, capturing the worktree at every
 * execution boundary (host/capture.ts), so there are real changesets to look at in GraphiQL. The token
 * needs the host and plugin roles' rights (the admin token printed at first start has both), or give the
 * plugin side its own (GATEWAY_PLUGIN_TOKEN, --plugin-token-file). Tokens come from `environment` or files
 * (cli/credentials.ts), never from the command line.
 */
export async function runDemo(args: string[], out: (line: string) => void = (l) => console.log(l), environment: NodeJS.ProcessEnv = process.env): Promise<DemoResult> {
  const parsed = parseArgs({ args, options: optionsOf('demo') }).values;
  const values = { ...parsed, url: parsed.url ?? `http://127.0.0.1:${environment.PORT || 4000}/graphql` };
  const token = readSecret(values, HOST_TOKEN, { required: true, environment });
  const plugin = new GatewayClient({ url: values.url!, token: readSecret(values, PLUGIN_TOKEN, { environment }) ?? token });
  const worktree = mkdtempSync(path.join(environment.TMPDIR || tmpdir(), 'gateway-demo-'));
  const host = new ReferenceHost({ url: values.url!, token, name: 'demo-host', leaseMs: 15_000, cwd: worktree });
  // Everything from here on in the try, so that the worktree is removed whatever fails (the first call
  // to a gateway that is not there, too).
  try {
    writeFileSync(path.join(worktree, '.gitignore'), '*.log\n');
    writeFileSync(path.join(worktree, 'greeting.txt'), 'hello\n');
    writeFileSync(path.join(worktree, 'README.md'), '# Demo worktree\n\nThe reference host edits greeting.txt here.\n');
    const capturer = new WorktreeCapturer();
    let hostID: string;
    try {
      hostID = await host.start();
    } catch (e) {
      if (e instanceof GatewayConnectionError) {
        throw new DemoError(`cannot reach the gateway at ${values.url} (${e.reason}). `
          + 'Is it running there? For a gateway on another port or host, give its address: npm run demo -- --url http://127.0.0.1:<PORT>/graphql');
      }
      // The gateway's words say which it was (no token, not a token, unknown or revoked) and how to make one.
      if (e instanceof GraphQLRequestError && e.status === 401) {
        const file = (parsed as Record<string, unknown>)['token-file'];
        const from = typeof file === 'string' ? `--token-file ${file}` : HOST_TOKEN.env;
        throw new DemoError(`the gateway at ${values.url} did not accept the token of ${from}: ${e.message} `
          + `(The demo needs an admin token, or a host token with a plugin token in ${PLUGIN_TOKEN.env}.)`);
      }
      throw e;
    }
    out(`registered host ${hostID}; worktree ${worktree}`);
    const snap = async (sessionID: string) => (await capturer.snapshot(host.client, sessionID, worktree, hostID)).id;

    const root: any = await plugin.call(CreateSessionDocument, { input: { title: 'Demo: fix the greeting', directory: worktree, metadata: { demo: true } } });
    const child: any = await plugin.call(CreateSessionDocument, { input: { parentID: root.id, title: 'Demo: reader subagent', directory: worktree } });
    out(`sessions ${root.id} (child ${child.id})`);

    // Execution 1: a prompt, a shell job that edits the worktree, model output, success.
    await host.appendText(root.id, null, 'Please make greeting.txt friendlier and leave a note.', 'PROMPT');
    const e1: any = await host.beginExecution(root.id, 'PROMPT', { startSnapshot: await snap(root.id) });
    const job = await host.runJob(root.id, e1.id, `printf 'hello, world\\n' > greeting.txt && printf '# Notes\\n\\n- greeting updated\\n' > notes.md && cat greeting.txt`, { title: 'edit greeting' });
    out(`  job ${job.id} running as pid ${job.pid}`);
    await job.done;
    await host.appendText(root.id, e1.id, 'greeting.txt now says "hello, world"; notes.md records it.');
    await host.settleExecution(e1.id, 'SUCCEEDED', { endSnapshot: await snap(root.id) });

    // Between executions, the user edits README.md by hand: no execution of the session runs, so that edit
    // is nobody's changeset but shows as the drift before execution 2 (and in the session's changes).
    writeFileSync(path.join(worktree, 'README.md'), '# Demo worktree\n\nThe reference host edits greeting.txt here.\nThe user added this line between two executions.\n');
    out('  the user edited README.md between executions 1 and 2');

    // Execution 2: a job that edits greeting.txt, writes an ignored log and fails.
    await host.appendText(root.id, null, 'Now run the build (it fails on purpose).', 'PROMPT');
    const e2: any = await host.beginExecution(root.id, 'PROMPT', { startSnapshot: await snap(root.id) });
    const bad = await host.runJob(root.id, e2.id, `printf 'hello, world!\\n' > greeting.txt; echo 'build failed: oops' > build.log; echo oops >&2; exit 3`, { title: 'failing build' });
    out(`  job ${bad.id} exited: ${JSON.stringify(await bad.done)}`);
    await host.settleExecution(e2.id, 'FAILED', { error: 'the build exited with 3', endSnapshot: await snap(root.id) });

    // The child session: one subagent execution that reads and changes nothing.
    const e3: any = await host.beginExecution(child.id, 'SYNTHETIC', { startSnapshot: await snap(child.id) });
    await host.appendText(child.id, e3.id, 'greeting.txt contains one line.');
    await host.settleExecution(e3.id, 'SUCCEEDED', { endSnapshot: await snap(child.id) });

    await plugin.call(UpdateSessionDocument, { input: { sessionID: root.id, metadata: { demo: true, phase: 'review' } } });
    // A second execution while one runs is refused (at most one running execution per session). The one that
    // runs is captured at both boundaries like the others, so its changeset says it changed nothing.
    const e4: any = await host.beginExecution(root.id, 'PROMPT', { startSnapshot: await snap(root.id) });
    try {
      await host.beginExecution(root.id, 'PROMPT');
    } catch (e) {
      if (e instanceof GatewayCallError) out(`  a second concurrent execution was refused: ${e.error._tag}`);
      else throw e;
    } finally {
      await host.settleExecution(e4.id, 'INTERRUPTED', { interruptReason: 'USER', endSnapshot: await snap(root.id) });
    }

    // The review page is served beside /graphql (review/src/main.ts: hash routes, #/session/<id>).
    const reviewURL = `${new URL('review/', values.url!).href}#/session/${root.id}`;
    const query = `query {
    changed: execution(id: "${e1.id}") { ...Changes }
    omitted: execution(id: "${e2.id}") { ...Changes driftBefore { fileCount files { path status patch } } }
    continuity(executionID: "${e1.id}") { __typename ... on ContinuityBroken { reason cause { sequence } } }
    session(id: "${root.id}") {
      title status metadata
      children { edges { node { id title } } }
      executions { edges { node { id sequence status error jobs { edges { node { title status exitCode } } } } } }
      changes(from: "${e1.id}", to: "${e2.id}") {
        ... on Changeset { fileCount coverage { __typename } files { path status additions deletions } }
      }
    }
  }
  fragment Changes on Execution {
    status
    changeset {
      fileCount additions deletions
      coverage { __typename ... on CoverageOmitted { omissions { path reason } } }
      files { path status additions deletions patch }
    }
  }`;
    out(`
Done. The session ran three executions: 1 edited greeting.txt and added notes.md (coverage complete),
2 edited greeting.txt again and wrote build.log, which .gitignore excludes (coverage omitted: IGNORED);
before 2, outside any execution, README.md was edited: execution 2's driftBefore shows it, and the
session's changes from 1 to 2 hold all three edits; 3 was interrupted after a concurrent one was refused (it
changed nothing); the child's one execution changed nothing. Every boundary was captured.
The worktree ${worktree} is removed now (--keep-worktree keeps it); the changesets stay on the gateway.

Review the session in a browser (sign in with the token): ${reviewURL}

Or open ${values.url} in a browser (GraphiQL), put {"Authorization": "Bearer <token>"} in Headers, and run:

  ${query}
`);
    return { worktree, hostID, sessionID: root.id, childID: child.id, changedID: e1.id, omittedID: e2.id, interruptedID: e4.id, query, reviewURL };
  } finally {
    await host.stop();
    await plugin.close();
    // The changesets were frozen on the gateway when each execution settled: they outlive the worktree.
    if (!values['keep-worktree']) rmSync(worktree, { recursive: true, force: true });
  }
}
