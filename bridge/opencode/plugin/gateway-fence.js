// gateway-fence — an OpenCode server plugin (prototype, verified against opencode-ai 1.18.33) that refuses new
// work in sessions the gateway has sealed. Plain ESM; no dependencies; runs in OpenCode's Bun runtime.
//
// WHAT IT ENFORCES
//   A session is "fenced" when a file named after its OpenCode session id exists in the fence directory
//   (`<fenceDir>/ses_…`, any content). For a fenced session — or a session whose parent/ancestor is fenced
//   (task-tool child sessions; parent looked up once through the plugin's API client, then cached) — these
//   hooks throw a SessionFencedError (observed behaviour in 1.18.33):
//     chat.message            POST /session/{id}/message (also noReply, subtask parts), /prompt_async, and the
//                             prompt built by /command and /init. Thrown BEFORE the user message is stored:
//                             nothing stored, no step, no model call, session stays idle. /message answers
//                             HTTP 500 {"name":"UnknownError",...,"ref":"err_…"}; /prompt_async answers 204 and
//                             emits a live (non-durable) `session.error` event carrying the message.
//     command.execute.before  /command, /init: refused, nothing stored — but OpenCode expands !`shell` snippets of
//                             the command template (including user ARGUMENTS) BEFORE this hook: they still run.
//     tool.execute.before     any tool call of a running turn: the tool part goes pending→running→error (the
//                             error text is the refusal); the tool does not run.
//     shell.env               POST /session/{id}/shell and the bash tool: the process is not spawned, but /shell
//                             has already stored a user message + assistant message + a bash part that ends
//                             `completed` with empty output (HTTP 500).
//     experimental.chat.system.transform, chat.params
//                             every model request of the session (loop steps, title, compaction): the step's
//                             assistant message is stored with error UnknownError (no step-start), no model call.
//     experimental.session.compacting
//                             POST /session/{id}/summarize: refused (HTTP 500) after OpenCode stored a user
//                             message with a `compaction` part (it stays pending in the history).
//   NOT covered (no hook on the path): the v2 API POST /api/session/{id}/prompt (admits the prompt durably and
//   starts a step with its own runner, no plugin hooks at all), revert/unrevert (restores files; a later refused
//   prompt or /shell still runs the revert cleanup first and deletes the reverted messages for good), /sync/replay
//   (injects arbitrary durable events), message DELETE / part PATCH, fork (a new, unfenced session id), PTYs
//   (/pty is not bound to a session), /vcs/apply, move-session. A running process is not stopped by a fence
//   (abort first). If the plugin fails to load, OpenCode logs it and runs WITHOUT it (fail-open).
//
// INSTALL (any one; all three verified with the isolation env of bridge/opencode/launch.ts, which sets
// OPENCODE_DISABLE_DEFAULT_PLUGINS=1 — that only drops OpenCode's built-in plugins; OPENCODE_PURE=1 / `--pure`
// drops every external plugin, this one included):
//   - config: `"plugin": ["file:///abs/path/to/gateway-fence.js"]` in the opencode.json given by OPENCODE_CONFIG
//     (or OPENCODE_CONFIG_CONTENT, or $XDG_CONFIG_HOME/opencode/opencode.json);
//   - copy the file into `$XDG_CONFIG_HOME/opencode/plugin/` (global: every directory);
//   - copy it into `<project>/.opencode/plugin/` (that project only; editable by the agent working in it).
//   Plugins load per OpenCode instance (per directory), lazily on the first instance-scoped request (not on
//   /global/health), and again after POST /instance/dispose. GET /config lists every loaded spec under `plugin`
//   (also the directory-discovered ones, as file:// URLs).
//
// FENCE DIRECTORY
//   $OPENCODE_GATEWAY_FENCE_DIR if set, else `$XDG_DATA_HOME/opencode/gateway-fence` (XDG_DATA_HOME defaults to
//   ~/.local/share), next to OpenCode's own opencode.db. The bridge seals a session by creating
//   `<fenceDir>/<opencodeSessionID>`. Checked with a synchronous fs.existsSync on every hook call: effective for
//   the next hook call, survives OpenCode restarts, no reload needed. Whoever can write into the folder can lift
//   or forge a fence: the plugin creates it (and `.plugin`) mode 0700 and its files 0600, and logs an error
//   when the folder belongs to another user or others can read or write it (the bridge refuses to start then).
//
// DETECTION
//   On each instance load the plugin writes `<fenceDir>/.plugin/<pid>.json`
//   `{ plugin, version, pid, fenceDir, directories: [...], loadedAt, updatedAt }`; pid is the OpenCode server
//   process (the pid of `opencode serve`). Refusals are appended as JSON lines to `<fenceDir>/.plugin/refusals.log`.
//   End-to-end check (what the bridge should rely on): create a throwaway session, fence it, POST
//   /session/{id}/message `{parts:[{type:"text",text:"canary"}], noReply:true}` → with the plugin: HTTP 500 and
//   0 stored messages (plus a refusals.log line); without: HTTP 200 and 1 stored message. Then delete it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const VERSION = "0.1.0";
const SESSION_ID = /^ses_[A-Za-z0-9]+$/;

function fenceDir() {
  if (process.env.OPENCODE_GATEWAY_FENCE_DIR) return process.env.OPENCODE_GATEWAY_FENCE_DIR;
  const data = process.env.XDG_DATA_HOME || path.join(os.homedir(), ".local", "share");
  return path.join(data, "opencode", "gateway-fence");
}

function writeJsonAtomic(file, value) {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(value, null, 2), { flag: "wx", mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** Why the fence folder cannot be trusted (another user's, or open to others), or null. */
function untrusted(dir) {
  const st = fs.lstatSync(dir);
  if (!st.isDirectory()) return `${dir} is not a folder`;
  if (typeof process.getuid === "function" && st.uid !== process.getuid()) {
    return `${dir} belongs to another user (uid ${st.uid}), who can lift or forge fences: use a folder of your own`;
  }
  if (typeof process.getuid === "function" && (st.mode & 0o077)) {
    return `other users can read or write ${dir} (mode 0${(st.mode & 0o777).toString(8)}), and so lift or forge fences: run chmod 700 ${dir}`;
  }
  return null;
}

/** Error thrown to refuse work. OpenCode shows `message`; the name helps the bridge recognise it. */
class SessionFencedError extends Error {
  constructor(sessionID, hook, fencedBy) {
    super(`gateway-fence: session ${sessionID} is sealed${fencedBy && fencedBy !== sessionID ? ` (ancestor ${fencedBy})` : ""}; refused ${hook}`);
    this.name = "SessionFencedError";
  }
}

// A session's parent never changes: cache it (null = root). Shared by all instances of this process.
const parentCache = new Map();

export const GatewayFence = async (ctx) => {
  const dir = fenceDir();
  const metaDir = path.join(dir, ".plugin");

  // Heartbeat / detection marker (one file per OpenCode process, listing the instance directories loaded).
  // Best effort: a failure here must not stop the hooks from loading (OpenCode would run without the plugin).
  try {
    fs.mkdirSync(metaDir, { recursive: true, mode: 0o700 });
    const problem = untrusted(dir);
    if (problem) console.error(`gateway-fence: ${problem}`);
    const marker = path.join(metaDir, `${process.pid}.json`);
    let prev = {};
    try { prev = JSON.parse(fs.readFileSync(marker, "utf8")); } catch { /* first instance of this process */ }
    const now = new Date().toISOString();
    writeJsonAtomic(marker, {
      plugin: "gateway-fence", version: VERSION, pid: process.pid, fenceDir: dir,
      directories: [...new Set([...(prev.directories ?? []), ctx.directory])],
      loadedAt: prev.loadedAt ?? now, updatedAt: now,
    });
  } catch (e) {
    console.error(`gateway-fence: cannot write the marker in ${metaDir}: ${e}`);
  }

  const fenced = (id) => typeof id === "string" && SESSION_ID.test(id) && fs.existsSync(path.join(dir, id));

  async function parentOf(id) {
    if (parentCache.has(id)) return parentCache.get(id);
    let res;
    try { res = await ctx.client.session.get({ path: { id } }); } catch { res = undefined; }
    const info = res?.data ?? res;
    if (!info || typeof info !== "object" || !("id" in info)) return undefined; // unknown: do not cache
    const parent = info.parentID ?? null;
    parentCache.set(id, parent);
    return parent;
  }

  /** The fenced session id covering `id` (itself or an ancestor), or null. */
  async function fencedBy(id) {
    if (typeof id !== "string") return null;
    for (let cur = id, depth = 0; cur && depth < 32; depth++) {
      if (fenced(cur)) return cur;
      cur = await parentOf(cur);
    }
    return null;
  }

  async function guard(hook, sessionID, detail) {
    const by = await fencedBy(sessionID);
    if (!by) return;
    try {
      fs.appendFileSync(path.join(metaDir, "refusals.log"),
        JSON.stringify({ time: new Date().toISOString(), pid: process.pid, hook, sessionID, fencedBy: by, ...detail }) + "\n", { mode: 0o600 });
    } catch { /* logging is best effort */ }
    throw new SessionFencedError(sessionID, hook, by);
  }

  return {
    "chat.message": async (input) => guard("chat.message", input.sessionID, { messageID: input.messageID }),
    "command.execute.before": async (input) => guard("command.execute.before", input.sessionID, { command: input.command }),
    "tool.execute.before": async (input) => guard("tool.execute.before", input.sessionID, { tool: input.tool, callID: input.callID }),
    // shell.env also runs for PTYs (no sessionID): those pass.
    "shell.env": async (input) => { if (input.sessionID) await guard("shell.env", input.sessionID, { callID: input.callID }); },
    "chat.params": async (input) => guard("chat.params", input.sessionID, {}),
    "experimental.chat.system.transform": async (input) => guard("experimental.chat.system.transform", input.sessionID, {}),
    "experimental.session.compacting": async (input) => guard("experimental.session.compacting", input.sessionID, {}),
  };
};

export default GatewayFence;
