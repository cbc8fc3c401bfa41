// The secrets a command takes (gateway tokens, passwords) come from an environment variable or from a file only
// its owner can read, never from the command line: every user of the machine reads a process' arguments
// (`ps`, /proc/<pid>/cmdline), while its environment (/proc/<pid>/environ) and a 0600 file are its user's alone.
//
// Each secret has a variable (`GATEWAY_TOKEN`) and a file option (`--token-file <file>`); the option that
// would carry it on the command line (`--token`) is still parsed, so that it is refused by name with what to
// use instead. A file wins over the variable. A secret taken from the variable is removed from the process'
// environment, so no child it starts (OpenCode and the shells of its agent, Claude Code) inherits it.
import { readOwnerOnlyFile } from '../bridge/common/private-files.js';

export interface Secret {
  /** What it is, in messages: "the gateway token (a host or admin token)". */
  what: string;
  /** The option refused on the command line, without dashes (`token`); `<option>-file` names a file holding it. */
  option: string;
  /** The environment variable it is read from. */
  env: string;
}

/** A secret missing, refused, or in a file that is not private: the message says what to do. */
export class CredentialError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialError';
  }
}

/** The gateway token a host (or the demo) works with. */
export const HOST_TOKEN: Secret = { what: 'the gateway token (a host or admin token)', option: 'token', env: 'GATEWAY_TOKEN' };
/** A token with the plugin role for a host's plugin side (default: the host token, e.g. an admin token). */
export const PLUGIN_TOKEN: Secret = { what: 'the plugin token', option: 'plugin-token', env: 'GATEWAY_PLUGIN_TOKEN' };

const fileOption = (s: Secret) => `${s.option}-file`;

/** How to give the secret, for messages: "set GATEWAY_TOKEN, or pass --token-file <file> (…)". */
export function howToGive(s: Secret): string {
  return `set ${s.env}, or pass --${fileOption(s)} <file> (a file only you can read: chmod 600 <file>)`;
}

/** The parseArgs options of these secrets: each file option, and each refused option (parsed to be refused by name). */
export function secretOptions(...secrets: Secret[]): Record<string, { type: 'string' }> {
  const options: Record<string, { type: 'string' }> = {};
  for (const s of secrets) {
    options[s.option] = { type: 'string' };
    options[fileOption(s)] = { type: 'string' };
  }
  return options;
}

/** Refuses any of these secrets given on the command line, naming the variable and the file option to use instead. */
export function refuseSecretArguments(values: Record<string, unknown>, ...secrets: Secret[]): void {
  for (const s of secrets) {
    if (values[s.option] !== undefined) {
      throw new CredentialError(`--${s.option} would show ${s.what} to every user of this machine (in the process list): ${howToGive(s)}`);
    }
  }
}

/**
 * The secret, from the file its file option names, else from its variable (then removed from `environment`);
 * undefined when neither is given and it is not `required`. Refuses the secret given on the command line.
 */
export function readSecret(values: Record<string, unknown>, s: Secret, o: { required: true; environment?: NodeJS.ProcessEnv }): string;
export function readSecret(values: Record<string, unknown>, s: Secret, o?: { required?: boolean; environment?: NodeJS.ProcessEnv }): string | undefined;
export function readSecret(values: Record<string, unknown>, s: Secret, o: { required?: boolean; environment?: NodeJS.ProcessEnv } = {}): string | undefined {
  refuseSecretArguments(values, s);
  const env = o.environment ?? process.env;
  const file = values[fileOption(s)];
  if (typeof file === 'string') {
    const text = readOwnerOnlyFile(file, `--${fileOption(s)}`).replace(/[\r\n]+$/, '');
    if (!text) throw new CredentialError(`--${fileOption(s)} ${file} is empty: it must hold ${s.what}`);
    return text;
  }
  const fromEnv = env[s.env];
  if (fromEnv) {
    delete env[s.env];
    return fromEnv;
  }
  if (o.required) throw new CredentialError(`${s.what} is required: ${howToGive(s)}`);
  return undefined;
}
