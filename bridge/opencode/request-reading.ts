// How the admission proxy reads a request: one reading of its method, target, headers and body, from which
// it decides what the request does and which OpenCode sessions it names. Where OpenCode could read the
// request differently, the proxy refuses it instead (fail closed).
//
// What OpenCode 1.18.33 does with a request (probed against the real server; bridge/opencode/NOTES.md, "The admission proxy"):
// its router percent-decodes path parameters (`/session/%73es_…` is session `ses_…`), matches route words
// case-insensitively (`/SESSION/…`), ignores repeated and trailing slashes and cuts the path at `;`; bodies
// are JSON (every request body in its OpenAPI document is application/json), parsed by JSON.parse. It
// reads the `x-opencode-directory` and `x-opencode-workspace` headers.
//
// So, for every request that is not a read (GET, HEAD, OPTIONS) and for every WebSocket upgrade:
// - the path must be canonical: segments of `A-Z a-z 0-9 - . _ ~`, percent-encoding only of other
//   characters (never of those, nor of `/ \ % ; ? # .` or controls), valid UTF-8, no empty, `.` or `..`
//   segments, no trailing slash, no `;` and no fragment; otherwise 400 NonCanonicalRequestError;
// - a non-empty body must be uncompressed UTF-8 JSON with a JSON content type; otherwise 415 or 400;
//   the proxy forwards the JSON it parsed, re-serialised, so OpenCode parses exactly what was classified
//   (escapes, duplicate keys and a byte order mark are gone);
// - the sessions it names are every `ses_…` ID in the decoded path, in the query (decoded until it no
//   longer changes), in OpenCode's own headers, and in any key or string of the parsed body.
// Stopping work (abort, interrupt, delete) and reading the durable history (POST /sync/history) are
// recognised only in their exact canonical spelling; any other spelling is admitted like work, so it can
// only be refused, never let through.

export type Policy = 'read' | 'stop' | 'admit' | 'preflight';

export interface Refusal {
  refused: true;
  status: number;
  name: string;
  message: string;
}

export interface Target {
  refused: false;
  policy: Policy;
  /** The target as received: what is forwarded (canonical unless the policy is read or preflight). */
  raw: string;
  /** The decoded path segments (canonical requests only; empty for reads). */
  segments: string[];
  /** The raw query, without its `?`. */
  query: string;
  /** `POST /session/{id}/prompt_async`: the route with its IDs generalised, for the admission record. */
  route: string;
}

export interface JsonBody {
  refused: false;
  /** The parsed body (undefined when it is empty). */
  value: unknown;
  /** What is forwarded: the parsed value re-serialised (empty when the body was). */
  bytes: Buffer;
}

export interface SessionsNamed {
  /** Sessions a path segment names exactly (unknown to OpenCode: 404). */
  path: string[];
  /** Sessions named anywhere else (unknown to OpenCode: nothing can run in them). */
  other: string[];
}

const refuse = (status: number, name: string, message: string): Refusal => ({ refused: true, status, name, message });

export const SESSION_ID = /^ses_[0-9A-Za-z]{6,64}$/;
const SESSION_IN_TEXT = /ses_[0-9A-Za-z]{6,64}/g;
const UNRESERVED = /^[A-Za-z0-9._~-]$/;
const RAW_SEGMENT = /^(?:[A-Za-z0-9._~-]|%[0-9A-Fa-f]{2})+$/;
/** Characters whose percent-encoding OpenCode's router and ours could read differently. */
const NEVER_ENCODED = new Set(['/', '\\', '%', ';', '?', '#', '.']);
const JSON_TYPE = /^application\/(?:[A-Za-z0-9.+-]+\+)?json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** Why a request path is not canonical, or null when it is (segments decoded). */
export function canonicalPath(path: string): { problem: string } | { segments: string[] } {
  if (!path.startsWith('/')) return { problem: 'the target is not a path (origin form)' };
  if (path === '/') return { segments: [] };
  if (path.includes('#')) return { problem: 'it has a fragment (#)' };
  if (path.includes(';')) return { problem: 'it has a ";" parameter' };
  if (path.endsWith('/')) return { problem: 'it ends with a slash' };
  const segments: string[] = [];
  for (const raw of path.slice(1).split('/')) {
    if (raw === '') return { problem: 'it has an empty segment (repeated slashes)' };
    if (raw === '.' || raw === '..') return { problem: 'it has a dot segment' };
    if (!RAW_SEGMENT.test(raw)) {
      const bad = [...raw].find((c) => c !== '%' && !UNRESERVED.test(c)) ?? '%';
      return { problem: bad === '%' ? 'it has a malformed percent-encoding' : `it has the character ${JSON.stringify(bad)}, which must be percent-encoded` };
    }
    const bytes: number[] = [];
    for (let i = 0; i < raw.length; i++) {
      if (raw[i] !== '%') { bytes.push(raw.charCodeAt(i)); continue; }
      const b = parseInt(raw.slice(i + 1, i + 3), 16);
      const c = String.fromCharCode(b);
      if (b < 0x80 && (UNRESERVED.test(c) || NEVER_ENCODED.has(c) || b < 0x20 || b === 0x7f)) {
        return { problem: `it percent-encodes ${JSON.stringify(c)} (${raw.slice(i, i + 3)}), which a canonical path never does` };
      }
      bytes.push(b);
      i += 2;
    }
    let text: string;
    try { text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Uint8Array.from(bytes)); } catch {
      return { problem: 'it percent-encodes bytes that are not UTF-8' };
    }
    segments.push(text);
  }
  return { segments };
}

/** A route with its IDs generalised: `POST /session/{id}/prompt_async`. */
export function routeOf(method: string, segments: string[]): string {
  return `${method} /${segments.map((s) => (/^[a-z]{3}_[0-9A-Za-z]{6,}$/.test(s) ? '{id}' : s)).join('/')}`.slice(0, 500);
}

/** What the proxy does with a request of this method and canonical path: only exact spellings stop. */
function policyOf(method: string, seg: string[]): Policy {
  // The durable history is read with a POST (its body names sessions to read, not to change).
  if (method === 'POST' && seg.length === 2 && seg[0] === 'sync' && seg[1] === 'history') return 'read';
  if (method === 'POST' && seg.length === 3 && seg[0] === 'session' && SESSION_ID.test(seg[1]) && seg[2] === 'abort') return 'stop';
  if (method === 'POST' && seg.length === 4 && seg[0] === 'api' && seg[1] === 'session' && SESSION_ID.test(seg[2]) && seg[3] === 'interrupt') return 'stop';
  if (method === 'DELETE' && seg.length === 2 && seg[0] === 'session' && SESSION_ID.test(seg[1])) return 'stop';
  return 'admit';
}

/**
 * Reads a request's method and target (as Node received them). Reads and CORS preflights pass as they
 * are; anything else must be canonical. `upgrade`: a WebSocket upgrade, read like work (a tunnel).
 */
export function readTarget(method: string, raw: string, upgrade = false): Refusal | Target {
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const query = q < 0 ? '' : raw.slice(q + 1);
  if (!upgrade && method === 'OPTIONS') return { refused: false, policy: 'preflight', raw, segments: [], query, route: '' };
  if (!upgrade && (method === 'GET' || method === 'HEAD')) return { refused: false, policy: 'read', raw, segments: [], query, route: '' };
  const c = canonicalPath(path);
  if ('problem' in c) {
    return refuse(400, 'NonCanonicalRequestError', `The gateway proxy refuses ${method} ${truncate(path)}: ${c.problem}. `
      + 'Send the path as OpenCode\'s SDK does (IDs and route words as they are, no dot segments, repeated or trailing slashes).');
  }
  if (query.includes('#')) return refuse(400, 'NonCanonicalRequestError', `The gateway proxy refuses ${method} ${truncate(path)}: its query has a fragment (#).`);
  return { refused: false, policy: upgrade ? 'admit' : policyOf(method, c.segments), raw, segments: c.segments, query, route: routeOf(method, c.segments) };
}

/** Reads the body of a work request: JSON or nothing. */
export function readJsonBody(headers: Record<string, string | string[] | undefined>, body: Buffer): Refusal | JsonBody {
  const encoding = String(headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    return refuse(415, 'UnsupportedMediaTypeError', `The gateway proxy forwards work requests with an uncompressed body only (content-encoding: ${truncate(encoding)}).`);
  }
  if (body.length === 0) return { refused: false, value: undefined, bytes: body };
  const type = String(headers['content-type'] ?? '').trim();
  if (!JSON_TYPE.test(type)) {
    return refuse(415, 'UnsupportedMediaTypeError', `The gateway proxy forwards work requests with a JSON body only (content-type: ${truncate(type) || 'none'}); OpenCode's API takes application/json.`);
  }
  let text: string;
  try { text = new TextDecoder('utf-8', { fatal: true }).decode(body); } catch {
    return refuse(400, 'BadRequestError', 'The request body is not UTF-8.');
  }
  let value: unknown;
  try { value = JSON.parse(text); } catch (e: any) {
    return refuse(400, 'BadRequestError', `The request body is not JSON (${e?.message ?? e}).`);
  }
  if (depthOf(value) > MAX_DEPTH) return refuse(400, 'BadRequestError', `The request body is nested deeper than ${MAX_DEPTH} levels.`);
  return { refused: false, value, bytes: Buffer.from(JSON.stringify(value)) };
}

/** OpenCode's request bodies are a few levels deep; far deeper ones are refused (and never re-serialised). */
const MAX_DEPTH = 256;

function depthOf(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (d > max) max = d;
    if (max > MAX_DEPTH) return max;
    for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push([x, d + 1]);
  }
  return max;
}

/** Every session ID in a text, also after percent-decoding it (repeatedly: double encoding). */
function idsIn(text: string, into: Set<string>) {
  for (let i = 0; i < 8; i++) {
    for (const id of text.match(SESSION_IN_TEXT) ?? []) into.add(id);
    // Byte-wise: IDs are ASCII, so a Latin-1 reading of the bytes finds every one of them.
    const next = text.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))).replace(/\+/g, ' ');
    if (next === text) return;
    text = next;
  }
}

/** Every key and string of a parsed JSON value (iteratively: a deeply nested body cannot overflow the stack). */
function stringsOf(value: unknown, visit: (s: string) => void) {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') visit(v);
    else if (Array.isArray(v)) stack.push(...v);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) { visit(k); stack.push(x); }
  }
}

/** The sessions a request names: its path, query, OpenCode's headers and its parsed body. */
export function sessionsNamed(target: Target, headers: Record<string, string | string[] | undefined>, body: unknown): SessionsNamed {
  const path = new Set(target.segments.filter((s) => SESSION_ID.test(s)));
  const other = new Set<string>();
  for (const s of target.segments) idsIn(s, other);
  idsIn(target.query, other);
  for (const [k, v] of Object.entries(headers)) if (k.startsWith('x-opencode-') && v !== undefined) idsIn(String(v), other);
  stringsOf(body, (s) => idsIn(s, other));
  for (const id of path) other.delete(id);
  return { path: [...path], other: [...other] };
}

function truncate(s: string) { return s.length > 200 ? `${s.slice(0, 200)}…` : s; }
