import { SessionSealedError } from './errors.js';

/**
 * The admission rule (CONTRACT 4): once a seal was requested (`seal_requested_at`, set under the
 * session row lock by the seal's first transaction), nothing new may start in the session: no
 * execution, prompt, job, backgrounded job, admitted request or compaction. Call it under the session
 * lock, with the row that lock read, so an admission either commits before the seal or is refused.
 */
export function admissionsClosed(session: { sealRequestedAt: Date | null }): boolean {
  return session.sealRequestedAt != null;
}

/** The admission rule as a check: SessionSealedError when the session's admissions are closed. */
export function requireAdmissionsOpen(session: { id: string; sealRequestedAt: Date | null }): void {
  if (admissionsClosed(session)) throw new SessionSealedError(session.id);
}

/**
 * The rule's end state: once SEALED nothing of the session runs any more, so nothing may write to it
 * either, not even what a running execution would still report (SessionSealedError).
 */
export function requireNotSealed(session: { id: string; sealedAt: Date | null }): void {
  if (session.sealedAt) throw new SessionSealedError(session.id);
}
