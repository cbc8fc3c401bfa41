// The bridges' own durable state (the OpenCode bridge: its host ID, per OpenCode session the cursor and mapping
// state, the gateway message -> OpenCode message map; a hooks-driven host, bridge/hooks-host/host-state.ts: its
// sessions and launches): a file of its own. A bridge reaches the gateway only through its public API; it never
// opens the gateway's database (the tables of migration 006 are no longer used: the OpenCode bridge's
// `legacy-state.ts` imports what an earlier version kept there).
import { closeSync, fsyncSync, mkdirSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import { checkNoOtherWriter, openOwnerOnly, PermissionError, readOwnFile } from './private-files.js';

/**
 * A session's row: `ocSessionID` is the row's key (the name is the file format's: an OpenCode session ID for the
 * OpenCode bridge; an agent session, `launch:<token>` or a host registration for a hooks-driven host), `state`
 * what the bridge keeps of it.
 */
export interface StoredSession<S = unknown> { ocSessionID: string; sessionID: string | null; lastSeq: number; state: S }
export interface StoredMessage { messageID: string; sessionID: string; ocSessionID: string; ocMessageID: string; parts: Record<string, string> }

export interface BridgeStore<S = unknown> {
  hostID(): Promise<string | null>;
  setHostID(id: string): Promise<void>;
  sessions(): Promise<StoredSession<S>[]>;
  saveSession(s: StoredSession<S>): Promise<void>;
  saveMessage(m: StoredMessage): Promise<void>;
  message(messageID: string): Promise<StoredMessage | null>;
  messageByOc(ocMessageID: string): Promise<StoredMessage | null>;
  close(): Promise<void>;
}

export interface FileShape<S = unknown> { hostID: string | null; sessions: Record<string, StoredSession<S>>; messages: Record<string, StoredMessage> }

type Entry<S> = { t: 'host'; id: string } | { t: 'session'; s: StoredSession<S> } | { t: 'forget'; id: string } | { t: 'message'; m: StoredMessage };

/**
 * The bridge's own store (no access to the gateway's database): one file, a log of JSON lines (the host
 * ID, a session's row after each applied event or its removal, a mirrored message), each appended and fsynced before
 * the call returns, so a write costs the size of the change, not of the whole state. Reading replays the
 * log (the last row of a session wins); a torn last line (a crash mid-append) is dropped. When the log
 * holds much more than the live state it is compacted: the live state written to a temporary file,
 * fsynced, renamed over the log, so a crash at any moment leaves the old or the new file, never a torn one.
 * (A file of the earlier whole-JSON format is read too, and rewritten as a log.)
 *
 * The file is its user's alone: written mode 0600 (an earlier version's looser mode is narrowed when it is
 * opened), never through a symbolic link, and refused when another user owns it or can replace it (a
 * folder holding it that others can write).
 */
export class FileBridgeStore<S = unknown> implements BridgeStore<S> {
  private data: FileShape<S> = { hostID: null, sessions: {}, messages: {} };
  private byOc = new Map<string, string>();
  private fd: number | null = null;
  private lines = 0;
  constructor(readonly file: string) {
    const what = 'the bridge\'s state file (--state)';
    mkdirSync(path.dirname(file), { recursive: true });
    checkNoOtherWriter(file, `${what} ${file}`);
    let text: string | null = null;
    try {
      text = readOwnFile(file, what);
    } catch (e: any) {
      if (e instanceof PermissionError) throw e;
      throw new Error(`${what} ${file} cannot be read (${e?.message ?? e}); it is never overwritten: fix or move it`);
    }
    if (text !== null && text.startsWith('{"hostID"')) {
      this.load(JSON.parse(text) as FileShape<S>); // the earlier whole-JSON format
      this.compact();
    } else if (text) {
      const rows = text.split('\n');
      const last = rows.length - 1;
      rows.forEach((line, i) => {
        if (!line) return;
        let e: Entry<S>;
        try { e = JSON.parse(line); } catch (err: any) {
          if (i === last && !text!.endsWith('\n')) return; // torn by a crash mid-append: never acknowledged
          throw new Error(`the bridge's state file ${file} is damaged at line ${i + 1} (${err?.message ?? err}); it is never overwritten: fix or move it`);
        }
        this.apply(e);
        this.lines++;
      });
      if (!text.endsWith('\n')) this.compact(); // drop the torn tail before appending after it
    }
  }
  private load(data: FileShape<S>) {
    this.data = { hostID: data.hostID ?? null, sessions: { ...data.sessions }, messages: { ...data.messages } };
    this.byOc.clear();
    for (const m of Object.values(this.data.messages)) if (!this.byOc.has(m.ocMessageID)) this.byOc.set(m.ocMessageID, m.messageID);
  }
  private apply(e: Entry<S>) {
    if (e.t === 'host') this.data.hostID = e.id;
    else if (e.t === 'session') this.data.sessions[e.s.ocSessionID] = e.s;
    else if (e.t === 'forget') delete this.data.sessions[e.id];
    else if (e.t === 'message' && !this.data.messages[e.m.messageID]) {
      this.data.messages[e.m.messageID] = e.m;
      if (!this.byOc.has(e.m.ocMessageID)) this.byOc.set(e.m.ocMessageID, e.m.messageID);
    }
  }
  private append(e: Entry<S>) {
    this.apply(e);
    if (this.fd === null) this.fd = openOwnerOnly(this.file, 'append');
    writeSync(this.fd, JSON.stringify(e) + '\n');
    fsyncSync(this.fd);
    const live = 1 + Object.keys(this.data.sessions).length + Object.keys(this.data.messages).length;
    if (++this.lines > Math.max(1_000, 4 * live)) this.compact();
  }
  private compact() {
    const tmp = `${this.file}.tmp`;
    const fd = openOwnerOnly(tmp, 'create');
    let n = 0;
    try {
      const out: string[] = [];
      if (this.data.hostID) out.push(JSON.stringify({ t: 'host', id: this.data.hostID }));
      for (const m of Object.values(this.data.messages)) out.push(JSON.stringify({ t: 'message', m }));
      for (const x of Object.values(this.data.sessions)) out.push(JSON.stringify({ t: 'session', s: x }));
      n = out.length;
      writeSync(fd, out.length ? out.join('\n') + '\n' : '');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (this.fd !== null) { closeSync(this.fd); this.fd = null; }
    renameSync(tmp, this.file);
    this.lines = n;
  }
  async hostID() { return this.data.hostID; }
  async setHostID(id: string) { if (this.data.hostID !== id) this.append({ t: 'host', id }); }
  async sessions() { return Object.values(this.data.sessions).map((s) => structuredClone(s)); }
  async saveSession(s: StoredSession<S>) { this.append({ t: 'session', s: structuredClone(s) }); }
  /** Drops a session's row (gone at the next compaction; a reader replaying the log drops it too). */
  async forgetSession(ocSessionID: string) { if (this.data.sessions[ocSessionID]) this.append({ t: 'forget', id: ocSessionID }); }
  async saveMessage(m: StoredMessage) {
    if (this.data.messages[m.messageID]) return;
    this.append({ t: 'message', m: structuredClone(m) });
  }
  async message(id: string) { return this.data.messages[id] ?? null; }
  async messageByOc(oc: string) { const id = this.byOc.get(oc); return id ? this.data.messages[id] ?? null : null; }
  async close() { if (this.fd !== null) { closeSync(this.fd); this.fd = null; } }

  /** Whether the file held a state when opened (a bridge that ran before), or this is a first start. */
  get empty() { return this.data.hostID === null && Object.keys(this.data.sessions).length === 0; }

  /** Replaces the whole state (the import of a state an earlier version kept in the gateway's database). */
  replace(data: FileShape<S>) {
    this.load(structuredClone(data));
    this.compact();
  }
}
