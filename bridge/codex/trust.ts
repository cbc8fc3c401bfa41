// `gateway host codex --trust`: Codex runs a hook of the user's configuration (`$CODEX_HOME/hooks.json`, where
// `--print-hooks` puts the host's) only once it is trusted, and skips an untrusted one silently. Trust is a hash
// per hook in `$CODEX_HOME/config.toml` (`[hooks.state."<key>"] trusted_hash`), which Codex reports and writes
// through its app-server: `hooks/list` gives each hook's key, current hash and trust status, and
// `config/value/write` (upsert into `hooks.state`) records the hashes, Codex writing its own file. Only the host's
// own hooks (those that run its hook script) are trusted; the user's others are left as they are.
import { startAppServer } from './app-server.js';
import { CODEX_HOOK_EVENTS } from './launch.js';

export interface TrustReport {
  /** The hooks trusted now, and those trusted already (their keys: `<hooks.json>:<event>:<group>:<handler>`). */
  trusted: string[];
  already: string[];
  /** The host's hook events Codex's configuration has no hook of the host's for (the host does not see them). */
  missing: string[];
}

interface HookMetadata { key: string; eventName: string; handlerType: string; command?: string; currentHash: string; trustStatus: string }

/** `sessionStart` -> `SessionStart` (hooks/list names events in camel case). */
const eventOf = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/**
 * Trusts the hooks of Codex's configuration (as seen from `cwd`, with the `CODEX_HOME` of `env`) that run the hook
 * script `script`. Throws when there are none (the user has not installed them: `--print-hooks`), or when Codex
 * still does not report them trusted afterwards.
 */
export async function trustHostHooks(o: { bin: string; script: string; cwd: string; env: NodeJS.ProcessEnv }): Promise<TrustReport> {
  const server = await startAppServer(o.bin, o.cwd, o.env);
  try {
    const list = async (): Promise<HookMetadata[]> => {
      const r = await server.call('hooks/list', { cwds: [o.cwd] });
      return (r?.data ?? []).flatMap((e: { hooks?: HookMetadata[] }) => e.hooks ?? [])
        .filter((h: HookMetadata) => h.handlerType === 'command' && typeof h.command === 'string' && h.command.includes(o.script));
    };
    const ours = await list();
    if (!ours.length) {
      throw new Error(`Codex's configuration (CODEX_HOME ${o.env.CODEX_HOME ?? '~/.codex'}) has no hook that runs ${o.script}: `
        + 'install the host\'s hooks first (gateway host codex --print-hooks writes them for $CODEX_HOME/hooks.json), then trust them');
    }
    const untrusted = ours.filter((h) => h.trustStatus !== 'trusted' && h.trustStatus !== 'managed');
    if (untrusted.length) {
      await server.call('config/value/write', {
        keyPath: 'hooks.state', mergeStrategy: 'upsert',
        value: Object.fromEntries(untrusted.map((h) => [h.key, { trusted_hash: h.currentHash }])),
      });
      const still = (await list()).filter((h) => h.trustStatus !== 'trusted' && h.trustStatus !== 'managed');
      if (still.length) throw new Error(`Codex still reports ${still.map((h) => `${h.key} ${h.trustStatus}`).join(', ')} after writing their trust`);
    }
    const events = new Set(ours.map((h) => eventOf(h.eventName)));
    return {
      trusted: untrusted.map((h) => h.key),
      already: ours.filter((h) => !untrusted.includes(h)).map((h) => h.key),
      missing: CODEX_HOOK_EVENTS.filter((e) => !events.has(e)),
    };
  } finally {
    await server.close();
  }
}
