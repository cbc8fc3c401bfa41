// The bridge's own durable state (its host ID, per OpenCode session the cursor and mapping state, the
// gateway message -> OpenCode message map): a JSON file of its own. The bridge reaches the gateway only
// through its public API; it never opens the gateway's database (the tables of migration 006 are no
// longer used: `legacy-state.ts` imports what an earlier version kept there).
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { SessionState } from './mapping.js';

export interface StoredSession { ocSessionID: string; sessionID: string | null; lastSeq: number; state: SessionState }
export interface StoredMessage { messageID: string; sessionID: string; ocSessionID: string; ocMessageID: string; parts: Record<string, string> }

export interface BridgeStore {
  hostID(): Promise<string | null>;
  setHostID(id: string): Promise<void>;
  sessions(): Promise<StoredSession[]>;
  saveSession(s: StoredSession): Promise<void>;
  saveMessage(m: StoredMessage): Promise<void>;
  message(messageID: string): Promise<StoredMessage | null>;
  messageByOc(ocMessageID: string): Promise<StoredMessage | null>;
  close(): Promise<void>;
}

export interface FileShape { hostID: string | null; sessions: Record<string, StoredSession>; messages: Record<string, StoredMessage> }

/**
 * The bridge's own store (no access to the gateway's database): one JSON file, rewritten atomically on
 * every change (write a temporary file, fsync it, rename it over the old one), so a crash at any moment
 * leaves the previous or the new state, never a torn one.
 */
export class FileBridgeStore implements BridgeStore {
  private data: FileShape;
  private byOc = new Map<string, string>();
  constructor(readonly file: string) {
    try {
      this.data = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e: any) {
      if (e?.code !== 'ENOENT') throw new Error(`the bridge's state file ${file} cannot be read (${e?.message ?? e}); it is never overwritten: fix or move it`);
      this.data = { hostID: null, sessions: {}, messages: {} };
    }
    for (const m of Object.values(this.data.messages)) if (!this.byOc.has(m.ocMessageID)) this.byOc.set(m.ocMessageID, m.messageID);
  }
  private flush() {
    mkdirSync(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.tmp`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, JSON.stringify(this.data));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.file);
  }
  async hostID() { return this.data.hostID; }
  async setHostID(id: string) { this.data.hostID = id; this.flush(); }
  async sessions() { return Object.values(this.data.sessions).map((s) => structuredClone(s)); }
  async saveSession(s: StoredSession) { this.data.sessions[s.ocSessionID] = structuredClone(s); this.flush(); }
  async saveMessage(m: StoredMessage) {
    if (this.data.messages[m.messageID]) return;
    this.data.messages[m.messageID] = m;
    if (!this.byOc.has(m.ocMessageID)) this.byOc.set(m.ocMessageID, m.messageID);
    this.flush();
  }
  async message(id: string) { return this.data.messages[id] ?? null; }
  async messageByOc(oc: string) { const id = this.byOc.get(oc); return id ? this.data.messages[id] ?? null : null; }
  async close() {}

  /** Whether the file held a state when opened (a bridge that ran before), or this is a first start. */
  get empty() { return this.data.hostID === null && Object.keys(this.data.sessions).length === 0; }

  /** Replaces the whole state (the import of a state an earlier version kept in the gateway's database). */
  replace(data: FileShape) {
    this.data = structuredClone(data);
    this.byOc.clear();
    for (const m of Object.values(this.data.messages)) if (!this.byOc.has(m.ocMessageID)) this.byOc.set(m.ocMessageID, m.messageID);
    this.flush();
  }
}
