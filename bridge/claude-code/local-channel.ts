// Who may talk to the Claude Code host: the kit's loopback secret (bridge/hooks-host/local-channel.ts), with
// the Claude Code host's names in what it says.
import * as kit from '../hooks-host/local-channel.js';

export { SECRET_HEADER, hostSecret, sameSecret } from '../hooks-host/local-channel.js';
export const CLAUDE_CODE_NAMES: kit.AgentNames = { label: 'Claude Code', command: 'claude-code', transcript: 'transcript' };
export const prepareHostDir = (dir: string) => kit.prepareHostDir(dir, CLAUDE_CODE_NAMES);
export const clientSecret = (dir: string) => kit.clientSecret(dir, CLAUDE_CODE_NAMES);
