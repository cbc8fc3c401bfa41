// Every command of `gateway` and every option it takes, declared once: the commands parse their arguments
// with `optionsOf(name)` and `--help` is written from the same declaration (`helpOf`, `usage`), so the help
// cannot leave out an option a command accepts. test/cli-help.test.ts checks each command's help against it.
import { HOST_TOKEN, PLUGIN_TOKEN, howToGive, type Secret } from './credentials.js';
import { environmentHelp } from '../server/environment.js';

/** What OpenCode's clients send to the admission proxy (bridge opencode --serve). */
export const PROXY_PASSWORD: Secret = { what: 'the proxy password (what OpenCode\'s clients send)', option: 'password', env: 'OPENCODE_PROXY_PASSWORD' };
/** The password of an OpenCode server the bridge attaches to (--url), if it has one. */
export const OPENCODE_PASSWORD: Secret = { what: 'the password of the OpenCode server', option: 'opencode-password', env: 'OPENCODE_SERVER_PASSWORD' };

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** The value's placeholder in the help (`file` prints `--token-file <file>`); string options only. */
  value?: string;
  short?: string;
  /** What it does, for the help (lines after the first are continuation lines). */
  what: string;
  /** Shown without brackets in the usage line. */
  required?: boolean;
  /** Parsed only to be refused by name (a secret on the command line: cli/credentials.ts); not in the help. */
  refused?: boolean;
  /** Its value may begin with a dash (other arguments: `--prompt-args '-c x=y'`), given after a space or an `=` (`argsOf`). */
  dashValue?: boolean;
}

export interface CommandSpec {
  /** The words after `gateway`: `serve`, `token create`. */
  name: string;
  /** The usage line's arguments when the options alone do not say them (positionals, alternatives). */
  synopsis?: string;
  /** What it does, one or more lines (the first is the overview's). */
  what: string;
  options: Record<string, OptionSpec>;
  /** Its help's closing text (serve: the environment). */
  more?: () => string;
}

/** A string option: `--name <value>`. */
function str(value: string, what: string, more: { required?: boolean } = {}) {
  return { type: 'string' as const, value, what, ...more };
}
/** A boolean option (a flag). */
function bool(what: string) {
  return { type: 'boolean' as const, what };
}

/** A secret's file option (`--token-file <file>`) and the refused option that would carry it (`--token`). */
function secret(s: Secret, what: string): Record<string, OptionSpec> {
  return {
    [`${s.option}-file`]: str('file', `${what}\n(or set ${s.env}; a file only you can read: chmod 600 <file>)`),
    [s.option]: { ...str('secret', `refused: ${howToGive(s)}`), refused: true },
  };
}

const GATEWAY_URL = str('graphql url', 'the gateway\'s GraphQL URL (default http://127.0.0.1:4000/graphql, or GATEWAY_URL)');
const HOST_TOKENS = {
  ...secret(HOST_TOKEN, 'a host or admin token (required)'),
  ...secret(PLUGIN_TOKEN, 'a plugin token for the host\'s plugin side (default: the token)'),
};

/** The options of a host of an agent driven by its hooks (host claude-code, host codex, host gemini). */
function hookHostOptions<P extends Record<string, OptionSpec>>(agent: string, defaultDir: string, models: string, printWhat: P) {
  return {
    dir: str('dir', `where the host keeps its state, hook script and port (default ${defaultDir})`),
    gateway: GATEWAY_URL,
    ...HOST_TOKENS,
    port: str('n', 'the port of the host\'s loopback channel, where its hooks report (default: a free one,\nwritten to <dir>/host.port)'),
    'lease-ms': str('ms', 'the host lease (default 30000)'),
    models: str('id,id…', `the models the host offers for generation, comma-separated (${models})`),
    'prompt-args': { ...str('args', `the ${agent} arguments of the runs that carry out review comments sent to the agent\n(split on spaces)`), dashValue: true },
    ...printWhat,
  };
}

const SPECS = {
  'serve': {
    what: 'run the gateway (its options come from the environment: gateway serve --help)', options: {},
    more: environmentHelp,
  },
  '--version': { what: 'print the gateway\'s version', options: {} },
  'migrate': { what: 'apply pending schema migrations', options: {} },
  'distribute': {
    what: 'on a Citus coordinator (DATABASE_URL): apply pending migrations, then\nplace every table on the cluster (see docs/citus.md)',
    options: {},
  },
  'token create': {
    what: 'create a bearer token in the gateway\'s database and print it once (only its\n'
      + 'hash is kept), saying which database; refused where no gateway has run yet',
    options: {
      role: {
        type: 'string' as const, value: 'role', required: true, what: 'what the token may do:\n'
          + '  reader  every query and subscription of sessions, executions, messages,\n'
          + '          changesets and settlements (a review page, an analytics tool)\n'
          + '  plugin  a reader\'s, plus sessions (create, update, remove), sealSession,\n'
          + '          correct and retract messages, compactSession, generate\n'
          + '  host    what a host does: registerHost and its lease, executions, jobs,\n'
          + '          messages, snapshots and contents, admitWork, its hostCommands\n'
          + '          (no reads of sessions)\n'
          + '  admin   everything, plus tokens and the changeset policy',
      },
      directory: str('prefix', 'the token sees and touches only sessions under it (an admin\'s scope, too)'),
      label: str('text', 'a note for the tokens list'),
    },
  },
  'token revoke': { synopsis: '<tokenID>', what: 'revoke a token', options: {} },
  'replay': {
    what: 'rebuild every table the journal owns from the journal',
    options: { verify: bool('replay into a scratch schema and compare (changes nothing)') },
  },
  'demo': {
    what: 'drive a few sessions through the reference host against a running gateway\n(in a temporary worktree, removed at the end unless --keep-worktree)',
    options: {
      url: str('graphql url', 'the gateway\'s GraphQL URL (default http://127.0.0.1:$PORT/graphql, PORT 4000 when unset)'),
      ...HOST_TOKENS,
      'keep-worktree': bool('keep the temporary worktree'),
    },
  },
  'bridge opencode': {
    synopsis: '--url <OpenCode URL> | --serve [--directory <dir>] [--listen 127.0.0.1:4096] [options]',
    what: 'make an OpenCode server a host of the gateway: mirror its sessions, steps,\n'
      + 'messages and jobs, and apply what plugins do on the gateway (corrections,\n'
      + 'retractions, seals, session changes) to OpenCode',
    options: {
      url: str('URL', 'attach to an OpenCode server you started (`opencode serve`); a seal then answers\nSealUnsupportedError(ADMISSION_NOT_EXCLUSIVE)'),
      serve: bool('start OpenCode privately behind the gateway\'s admission proxy; its clients use\n--listen with the password; a seal then answers SessionSealed'),
      directory: str('dir', '(--serve) the project OpenCode serves (default: the current directory)'),
      listen: str('[host:]port', '(--serve) where OpenCode\'s clients connect (default 127.0.0.1:4096, or OPENCODE_PROXY_LISTEN)'),
      'max-body-bytes': str('n', '(--serve) the largest request body the proxy admits (default 32 MiB)'),
      gateway: { ...GATEWAY_URL, value: 'URL' },
      ...secret(HOST_TOKEN, 'a host or admin token (required)'),
      ...secret(PLUGIN_TOKEN, 'a plugin token for the plugin side, with a host token (default: the token)'),
      ...secret(PROXY_PASSWORD, '(--serve) what OpenCode\'s clients send (HTTP basic auth, user "opencode")'),
      ...secret(OPENCODE_PASSWORD, '(--url) the password of the OpenCode server, if it has one'),
      state: str('file', 'the bridge\'s own state (default bridge-opencode-<server>.json in the checkout\'s .data,\nor in ~/.local/share/agent-history-gateway when installed)'),
      'opencode-data': str('dir', 'OpenCode\'s $XDG_DATA_HOME, where its snapshots are (default ~/.local/share)'),
      'fence-dir': str('dir', 'where seals fence sessions for the gateway-fence plugin (a folder only you can\nread and write: created mode 0700, refused when others can)'),
      'lease-ms': str('ms', 'the host lease'),
      'import-state-from': str('URL', 'copy the state an earlier version kept in the gateway\'s database into --state, once\n(a URL without its password: set PGPASSWORD)'),
    },
  },
  'host claude-code': {
    what: 'mirror Claude Code sessions (through its hooks and transcripts) into the gateway',
    options: hookHostOptions('Claude Code', '$GATEWAY_CLAUDE_DIR, else ~/.gateway/claude-code', 'default: Claude Code\'s', {
      'print-settings': bool('print the hooks to merge into ~/.claude/settings.json (observed sessions), and exit'),
    }),
  },
  'claude-code': {
    synopsis: '[--dir <dir>] [claude arguments…]',
    what: 'run Claude Code with the host\'s hooks in force: the gateway fronts the\n'
      + 'session (a seal is then proven: SessionSealed); run it in your project.\n'
      + 'What the host refused is printed on stderr (the exit code is Claude\n'
      + 'Code\'s). As root, allow tools with --allowedTools "Bash Edit Write Read"\n'
      + '(Claude Code refuses --dangerously-skip-permissions there)',
    options: { dir: str('dir', 'the host\'s folder (as host claude-code --dir); first, before Claude Code\'s own arguments') },
  },
  'host codex': {
    what: 'mirror Codex CLI threads (through its hooks and rollouts) into the gateway',
    options: hookHostOptions('Codex', '$GATEWAY_CODEX_DIR, else ~/.gateway/codex', 'default: none, no generation', {
      'print-hooks': bool('print the hooks for $CODEX_HOME/hooks.json (observed threads), and exit'),
      trust: bool('trust the host\'s hooks installed in Codex\'s configuration ($CODEX_HOME/hooks.json,\n'
        + 'from --print-hooks): Codex skips untrusted hooks silently; then exit'),
      'prompt-args': { ...str('args', 'the arguments of `codex exec resume <args> <thread> <prompt>`, the runs that carry\n'
        + 'out review comments sent to Codex (split on spaces), e.g. -c sandbox_mode="workspace-write"'), dashValue: true },
    }),
  },
  'codex': {
    synopsis: '[--dir <dir>] [codex arguments…]',
    what: 'run Codex with the host\'s hooks in force and trusted: the gateway fronts\n'
      + 'the thread (a seal is then proven: SessionSealed); arguments that would\n'
      + 'switch the hooks off are refused. CODEX_BIN names your own codex binary',
    options: { dir: str('dir', 'the host\'s folder (as host codex --dir); first, before Codex\'s own arguments') },
  },
  'host gemini': {
    what: 'mirror Gemini CLI sessions (through its hooks and chat histories) into the gateway',
    options: hookHostOptions('Gemini CLI', '$GATEWAY_GEMINI_DIR, else ~/.gateway/gemini', 'default: none, no generation', {}),
  },
  'gemini': {
    synopsis: '[--dir <dir>] [gemini arguments…]',
    what: 'run Gemini CLI with the host\'s hooks in force (written into its user\n'
      + 'settings) and --skip-trust: the gateway fronts the session (a seal is then\n'
      + 'proven: SessionSealed); --acp and --sandbox are refused. GEMINI_BIN names\n'
      + 'your own bundle/gemini.js',
    options: { dir: str('dir', 'the host\'s folder (as host gemini --dir); first, before Gemini CLI\'s own arguments') },
  },
} satisfies Record<string, Omit<CommandSpec, 'name'>>;

/** The name of a command (`token create`). */
export type CommandName = keyof typeof SPECS;

/** Every command, in the order of `gateway --help`. */
export const COMMANDS: readonly CommandSpec[] = Object.entries(SPECS).map(([name, c]) => ({ name, ...c }));

export function commandOf(name: CommandName): CommandSpec {
  return COMMANDS.find((x) => x.name === name)!;
}

type ParseOptions<O> = { [K in keyof O]: { type: O[K] extends { type: infer T } ? T : never; short?: string } };

/** The command's options as `parseArgs` takes them (every declared option, the refused ones too). */
export function optionsOf<N extends CommandName>(name: N): ParseOptions<(typeof SPECS)[N]['options']> {
  const out: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const [o, spec] of Object.entries(SPECS[name].options as Record<string, OptionSpec>)) out[o] = spec.short ? { type: spec.type, short: spec.short } : { type: spec.type };
  return out as ParseOptions<(typeof SPECS)[N]['options']>;
}

/**
 * The command's arguments as `parseArgs` reads them: an option whose value may begin with a dash (`dashValue`)
 * given as `--prompt-args -c x=y` is passed as `--prompt-args=-c x=y` (parseArgs takes such a value only so).
 */
export function argsOf(name: CommandName, args: string[]): string[] {
  const options = SPECS[name].options as Record<string, OptionSpec>;
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const o = args[i].startsWith('--') ? options[args[i].slice(2)] : undefined;
    if (o?.dashValue && i + 1 < args.length) out.push(`${args[i]}=${args[++i]}`);
    else out.push(args[i]);
  }
  return out;
}

/** The options a user may give (what the help lists): all but those parsed only to be refused. */
export function listedOptions(c: CommandSpec): [string, OptionSpec][] {
  return Object.entries(c.options).filter(([, o]) => !o.refused);
}

const flag = (name: string, o: OptionSpec) => `--${name}${o.type === 'string' ? ` <${o.value ?? 'value'}>` : ''}`;

/**
 * The arguments of the usage line: the synopsis, or each option (in brackets unless required); past a
 * line's width, the required ones and `[options]`.
 */
function synopsisOf(c: CommandSpec): string {
  if (c.synopsis !== undefined) return c.synopsis;
  const all = listedOptions(c).map(([n, o]) => (o.required ? flag(n, o) : `[${flag(n, o)}]`)).join(' ');
  if (all.length <= 80) return all;
  return [...listedOptions(c).filter(([, o]) => o.required).map(([n, o]) => flag(n, o)), '[options]'].join(' ');
}

const COLUMN = 42;

/** `gateway --help`: every command with its arguments and what it does. */
export function usage(): string {
  const entries = COMMANDS.map((c) => {
    const head = `  ${c.name}${synopsisOf(c) ? ` ${synopsisOf(c)}` : ''}`;
    const [first, ...rest] = c.what.split('\n');
    const lines = head.length < COLUMN - 1 ? [head.padEnd(COLUMN) + first] : [head, ' '.repeat(COLUMN) + first];
    return [...lines, ...rest.map((l) => ' '.repeat(COLUMN) + l)].join('\n');
  });
  return `Usage: gateway <command> [options]   (gateway <command> --help: every option of that command)\n\n${entries.join('\n')}\n${SECRETS}`;
}

const SECRETS = `
Tokens and passwords are never taken from the command line (every user of the machine can read it): each comes
from a variable or from a file only you can read (chmod 600 <file>), which wins over the variable:
  GATEWAY_TOKEN or --token-file           a host or admin token (demo, bridge opencode, host claude-code|codex|gemini)
  GATEWAY_PLUGIN_TOKEN or --plugin-token-file
                                          a plugin token for a host's plugin side (default: the token)
  OPENCODE_PROXY_PASSWORD or --password-file
                                          what OpenCode's clients send to the admission proxy (bridge opencode --serve)
  OPENCODE_SERVER_PASSWORD or --opencode-password-file
                                          the password of the OpenCode server the bridge attaches to (--url)
`;

/** `gateway <command> --help`: its usage line, what it does, and every option it takes. */
export function helpOf(c: CommandSpec): string {
  const synopsis = synopsisOf(c);
  const listed = listedOptions(c);
  const width = Math.max(24, ...listed.map(([n, o]) => flag(n, o).length + 4));
  const options = [...listed.map(([n, o]) => {
    const [first, ...rest] = o.what.split('\n');
    return [`  ${flag(n, o).padEnd(width - 2)}${first}`, ...rest.map((l) => ' '.repeat(width) + l)].join('\n');
  }), `  ${'-h, --help'.padEnd(width - 2)}this help`];
  return `Usage: gateway ${c.name}${synopsis ? ` ${synopsis}` : ''}\n\n${c.what}\n\nOptions:\n${options.join('\n')}\n${c.more?.() ?? ''}`;
}

/**
 * The commands a `--help` asks about: `args` as given after `gateway` (without --help); the command named by
 * its first two words or its first word, or every command whose name begins with the first word
 * (`gateway token --help`, `gateway host --help`); none for an unknown one.
 */
export function commandsNamed(args: string[]): CommandSpec[] {
  const words = args.filter((a) => a !== '--help' && a !== '-h');
  const two = COMMANDS.find((c) => c.name === words.slice(0, 2).join(' '));
  if (two) return [two];
  const one = COMMANDS.find((c) => c.name === words[0]);
  if (one) return [one];
  return COMMANDS.filter((c) => c.name.split(' ')[0] === words[0]);
}
