import type { Sql } from '../db/connection.js';
import type { Actor } from './access.js';
import { closeAdmissions } from './admission.js';
import { acknowledge, findCommand, unknownCommand, type HostCommandRow } from './commands.js';
import { requireId } from './validate.js';

/**
 * A host's acknowledgement of a command (domain/commands.ts). Most are only marked; acknowledging
 * CLOSE_ADMISSIONS closes the session's admissions (domain/admission.ts), which a seal waits for.
 * The host says it has obeyed (or dropped as moot) a command. Idempotent.
 */
export async function acknowledgeCommand(sql: Sql, actor: Actor, input: { commandID: string }): Promise<HostCommandRow> {
  const commandID = requireId('command', input.commandID, 'commandID');
  const c = await findCommand(sql, actor, commandID);
  if (!c) throw unknownCommand(commandID);
  if (c.kind === 'CLOSE_ADMISSIONS') return closeAdmissions(sql, actor, c);
  const u = await acknowledge(sql, commandID);
  if (!u) throw unknownCommand(commandID); // removed with its session meanwhile
  return u;
}

