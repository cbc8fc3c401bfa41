// Upgrading a bridge that kept its state in the gateway's database (tables of migration 006, used by
// versions that kept it in the gateway's database): `gateway bridge opencode --import-state-from <gateway database URL>`
// copies that state (host ID, cursors, mapping state, message map) of one OpenCode server into the
// bridge's own state file, once, read-only. Without it the upgraded bridge would register as a new host
// and replay OpenCode's whole history under it: the gateway refuses the replayed calls (their idempotency
// keys were used with the old host ID), so those sessions would not be followed any more.
import type { FileShape, StoredMessage, StoredSession } from './store.js';

export async function readLegacyState(databaseUrl: string, server: string): Promise<FileShape> {
  const { connect } = await import('../../db/connection.js');
  const sql = connect(databaseUrl, { max: 1 });
  try {
    const [exists] = await sql`SELECT to_regclass('bridge_opencode_sessions') IS NOT NULL AS ok`;
    if (!exists?.ok) throw new Error('that database has no bridge_opencode_* tables: nothing to import');
    const [host] = await sql`SELECT host_id FROM bridge_opencode_hosts WHERE server = ${server}`;
    const sessions: Record<string, StoredSession> = {};
    for (const r of await sql`SELECT * FROM bridge_opencode_sessions WHERE server = ${server}`) {
      sessions[r.ocSessionId] = { ocSessionID: r.ocSessionId, sessionID: r.sessionId, lastSeq: Number(r.lastSeq), state: r.state };
    }
    const messages: Record<string, StoredMessage> = {};
    for (const r of await sql`SELECT * FROM bridge_opencode_messages WHERE server = ${server}`) {
      messages[r.messageId] = { messageID: r.messageId, sessionID: r.sessionId, ocSessionID: r.ocSessionId, ocMessageID: r.ocMessageId, parts: r.parts };
    }
    if (!host && Object.keys(sessions).length === 0) throw new Error(`no bridge state for OpenCode server ${server} in that database (servers are stored by their URL)`);
    return { hostID: (host?.hostId as string) ?? null, sessions, messages };
  } finally {
    await sql.end({ timeout: 2 });
  }
}
