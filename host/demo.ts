import { parseArgs } from 'node:util';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GatewayClient, GatewayCallError } from '../client/index.js';
import { CreateSessionDocument, UpdateSessionDocument } from '../client/generated.js';
import { ReferenceHost } from './host.js';

/**
 * `npm run demo -- --token <token>`: drives a few sessions through the reference host against a
 * running gateway, so there is data to look at in GraphiQL. The token needs the host and plugin
 * roles' rights (the admin token printed at first start has both).
 */
export async function runDemo(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      url: { type: 'string', default: `http://127.0.0.1:${process.env.PORT ?? 4000}/graphql` },
      token: { type: 'string' },
      'plugin-token': { type: 'string' },
    },
  });
  const token = values.token ?? process.env.GATEWAY_TOKEN;
  if (!token) throw new Error('demo needs --token <admin or host token> (the admin token is printed at the gateway\'s first start)');
  const plugin = new GatewayClient({ url: values.url!, token: values['plugin-token'] ?? token });
  const worktree = mkdtempSync(path.join(tmpdir(), 'gateway-demo-'));
  const host = new ReferenceHost({ url: values.url!, token, name: 'demo-host', leaseMs: 15_000, cwd: worktree });
  const hostID = await host.start();
  console.log(`registered host ${hostID}; worktree ${worktree}`);

  const root: any = await plugin.call(CreateSessionDocument, { input: { title: 'Demo: fix the greeting', directory: worktree, metadata: { demo: true } } });
  const child: any = await plugin.call(CreateSessionDocument, { input: { parentID: root.id, title: 'Demo: reader subagent' } });
  console.log(`sessions ${root.id} (child ${child.id})`);

  // Execution 1: a prompt, a shell job, model output, success.
  await host.appendText(root.id, null, 'Please write greeting.txt and check it.', 'PROMPT');
  const e1: any = await host.beginExecution(root.id, 'PROMPT');
  writeFileSync(path.join(worktree, 'greeting.txt'), 'hello\n');
  const job = await host.runJob(root.id, e1.id, 'cat greeting.txt && sleep 0.2', { title: 'check greeting' });
  console.log(`  job ${job.id} running as pid ${job.pid}`);
  await job.done;
  await host.appendText(root.id, e1.id, 'I wrote greeting.txt; it says hello.');
  await host.settleExecution(e1.id, 'SUCCEEDED');

  // Execution 2: a failing job and a failed execution.
  await host.appendText(root.id, null, 'Now make it fail on purpose.', 'PROMPT');
  const e2: any = await host.beginExecution(root.id, 'PROMPT');
  const bad = await host.runJob(root.id, e2.id, 'echo oops >&2; exit 3', { title: 'failing command' });
  console.log(`  job ${bad.id} exited: ${JSON.stringify(await bad.done)}`);
  await host.settleExecution(e2.id, 'FAILED', { error: 'the command exited with 3' });

  // The child session: one subagent execution.
  const e3: any = await host.beginExecution(child.id, 'SYNTHETIC');
  await host.appendText(child.id, e3.id, 'greeting.txt contains one line.');
  await host.settleExecution(e3.id, 'SUCCEEDED');

  await plugin.call(UpdateSessionDocument, { input: { sessionID: root.id, metadata: { demo: true, phase: 'review' } } });
  try {
    await host.beginExecution(root.id, 'PROMPT').then((e: any) => host.beginExecution(root.id, 'PROMPT').finally(() => host.settleExecution(e.id, 'INTERRUPTED', { interruptReason: 'USER' })));
  } catch (e) {
    if (e instanceof GatewayCallError) console.log(`  a second concurrent execution was refused: ${JSON.stringify(e.error)}`);
    else throw e;
  }
  await host.stop();
  await plugin.close();
  console.log(`
Done. Open ${values.url} in a browser (GraphiQL), put {"Authorization": "Bearer <token>"} in Headers, and try:

  query {
    session(id: "${root.id}") {
      title status metadata
      children { edges { node { id title } } }
      executions { edges { node { sequence status error jobs { edges { node { title status exitCode } } } } } }
      messages { edges { node { role origin parts { ... on TextPart { text } } } } }
    }
    continuity(executionID: "${e1.id}") { __typename ... on ContinuityBroken { reason cause { sequence } } }
  }
`);
}
