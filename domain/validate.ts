import { InvalidRequestError } from './errors.js';
import { isId, PREFIX, type Kind } from './ids.js';

/** Limits on what a client may store; exceeding one is an InvalidRequestError, never a truncation. */
export const LIMITS = {
  title: 1_000,
  directory: 4_096,
  metadataBytes: 64 * 1024,
  textBytes: 1024 * 1024,
  partsPerMessage: 200,
  command: 64 * 1024,
  jsonBytes: 1024 * 1024,
  reason: 2_000,
  hostName: 200,
  error: 64 * 1024,
} as const;

export function requireId(kind: Kind, value: unknown, field: string): string {
  if (!isId(kind, value)) {
    throw new InvalidRequestError(field, `${field} must be an ID starting with "${PREFIX[kind]}_".`);
  }
  return value;
}

export function optionalId(kind: Kind, value: unknown, field: string): string | null {
  if (value === null || value === undefined) return null;
  return requireId(kind, value, field);
}

export function checkText(value: string, field: string, max: number, opts: { nonEmpty?: boolean } = {}): string {
  if (value.includes('\u0000')) throw new InvalidRequestError(field, `${field} must not contain NUL characters.`);
  if (Buffer.byteLength(value, 'utf8') > max) throw new InvalidRequestError(field, `${field} is longer than ${max} bytes.`);
  if (opts.nonEmpty && value.trim() === '') throw new InvalidRequestError(field, `${field} must not be empty.`);
  return value;
}

/** JSON stored in jsonb: no NUL characters (Postgres refuses \u0000), bounded size. */
export function checkJson(value: unknown, field: string, maxBytes: number): unknown {
  const text = JSON.stringify(value ?? null);
  if (Buffer.byteLength(text, 'utf8') > maxBytes) throw new InvalidRequestError(field, `${field} is larger than ${maxBytes} bytes.`);
  if (text.includes('\\u0000')) throw new InvalidRequestError(field, `${field} must not contain NUL characters.`);
  return value;
}

export function checkMetadata(value: unknown, field = 'metadata'): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidRequestError(field, `${field} must be a JSON object.`);
  }
  return checkJson(value, field, LIMITS.metadataBytes) as Record<string, unknown>;
}

export function checkDirectory(value: string, field = 'directory'): string {
  checkText(value, field, LIMITS.directory, { nonEmpty: true });
  if (!value.startsWith('/')) throw new InvalidRequestError(field, `${field} must be an absolute path.`);
  if (value.split('/').some((s) => s === '..' || s === '.')) throw new InvalidRequestError(field, `${field} must not contain "." or ".." segments.`);
  return value.length > 1 && value.endsWith('/') ? value.slice(0, -1) : value;
}
