// Helpers of the end-to-end tests that drive a real OpenCode server (test/bridge-opencode*.test.ts).
import type { OpencodeClient } from '../../bridge/opencode/client.js';
import { scriptPrompt, type ScriptStep } from '../../bridge/opencode/scripted-model.js';

import { until } from './until.js';

export { until };

/**
 * Sends a scripted prompt to an OpenCode session; answers a function that waits until OpenCode has
 * answered it completely (its last message a completed assistant message) and the session is idle.
 */
export async function promptAsync(client: OpencodeClient, ocSession: string, steps: ScriptStep[], intro = 'do it'): Promise<() => Promise<unknown>> {
  const before = (await client.messages(ocSession)).length;
  await client.promptAsync(ocSession, scriptPrompt(intro, steps));
  return () => until('OpenCode turn finished', async () => {
    if ((await client.status())[ocSession]) return false;
    const m = await client.messages(ocSession);
    const last = m.at(-1);
    return m.length > before + 1 && last?.info.role === 'assistant' && !!last.info.time.completed;
  }, 180_000);
}
