// Durable bridge state: Postgres tables of migration 006 (when the bridge can reach the gateway's
// database) or a JSON file (anywhere else). Both keep the same three maps.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Sql } from '../../db/connection.js';
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

export class PgBridgeStore implements BridgeStore {
  constructor(private readonly sql: Sql, private readonly server: string, private readonly owned = false) {}
  async hostID() {
    const [r] = await this.sql`SELECT host_id FROM bridge_opencode_hosts WHERE server = ${this.server}`;
    return (r?.hostId as string) ?? null;
  }
  async setHostID(id: string) {
    await this.sql`INSERT INTO bridge_opencode_hosts (server, host_id) VALUES (${this.server}, ${id})
      ON CONFLICT (server) DO UPDATE SET host_id = excluded.host_id, updated_at = now()`;
  }
  async sessions() {
    const rows = await this.sql`SELECT * FROM bridge_opencode_sessions WHERE server = ${this.server}`;
    return rows.map((r: any) => ({ ocSessionID: r.ocSessionId, sessionID: r.sessionId, lastSeq: Number(r.lastSeq), state: r.state }));
  }
  async saveSession(s: StoredSession) {
    await this.sql`INSERT INTO bridge_opencode_sessions (server, oc_session_id, session_id, last_seq, state)
      VALUES (${this.server}, ${s.ocSessionID}, ${s.sessionID}, ${s.lastSeq}, ${this.sql.json(s.state as any)})
      ON CONFLICT (server, oc_session_id) DO UPDATE SET session_id = excluded.session_id, last_seq = excluded.last_seq,
        state = excluded.state, updated_at = now()`;
  }
  async saveMessage(m: StoredMessage) {
    await this.sql`INSERT INTO bridge_opencode_messages (message_id, session_id, server, oc_session_id, oc_message_id, parts)
      VALUES (${m.messageID}, ${m.sessionID}, ${this.server}, ${m.ocSessionID}, ${m.ocMessageID}, ${this.sql.json(m.parts)})
      ON CONFLICT (message_id) DO NOTHING`;
  }
  private row(r: any): StoredMessage | null {
    return r ? { messageID: r.messageId, sessionID: r.sessionId, ocSessionID: r.ocSessionId, ocMessageID: r.ocMessageId, parts: r.parts } : null;
  }
  async message(messageID: string) {
    const [r] = await this.sql`SELECT * FROM bridge_opencode_messages WHERE message_id = ${messageID}`;
    return this.row(r);
  }
  async messageByOc(ocMessageID: string) {
    const [r] = await this.sql`SELECT * FROM bridge_opencode_messages WHERE server = ${this.server} AND oc_message_id = ${ocMessageID}`;
    return this.row(r);
  }
  async close() { if (this.owned) await this.sql.end({ timeout: 2 }); }
}

interface FileShape { hostID: string | null; sessions: Record<string, StoredSession>; messages: Record<string, StoredMessage> }

/**
 * The bridge's own store (no access to the gateway's database): one JSON file, rewritten atomically on
 * every change (write a temporary file, fsync it, rename it over the old one), so a crash at any moment
 * leaves the previous or the new state, never a torn one.
 */
export class FileBridgeStore implements BridgeStore {
  private data: FileShape;
  private byOc = new Map<string, string>();
  constructor(private readonly file: string) {
    try { this.data = JSON.parse(readFileSync(file, 'utf8')); } catch { this.data = { hostID: null, sessions: {}, messages: {} }; }
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
}
