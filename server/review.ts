import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { PROJECT_DIR } from '../db/index.js';
import { isInstalledPackage } from './data-dir.js';

/**
 * The review page (review/, built with Vite) served at /review. Static assets only: the page reads
 * the gateway like any client, through /graphql with the token its user enters, so serving it needs
 * no token and opens no data path of its own.
 *
 * In a checkout the bundle is built from the sources on a fresh clone: `npm run build:review`, or here on
 * the first request when review/dist is missing or older than its sources (built into a temporary folder
 * and moved into place, so concurrent builders never serve a half-written bundle). The installed package
 * (bin/package.mjs) serves the bundle it was packed with and never builds: it has neither the page's
 * sources nor Vite, and the times its files were unpacked with say nothing about which is newer.
 */
export const REVIEW_SRC = path.join(PROJECT_DIR, 'review');
export const REVIEW_DIST = path.join(REVIEW_SRC, 'dist');
const STAMP = '.sources-mtime';
const SOURCES = [path.join(REVIEW_SRC, 'index.html'), path.join(REVIEW_SRC, 'vite.config.ts'), path.join(REVIEW_SRC, 'src'), path.join(PROJECT_DIR, 'client')];

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

function newestMtime(p: string): number {
  if (!existsSync(p)) return 0;
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let m = st.mtimeMs;
  for (const e of readdirSync(p)) m = Math.max(m, newestMtime(path.join(p, e)));
  return m;
}

function sourcesMtime(): number {
  return Math.max(...SOURCES.map(newestMtime));
}

/** Whether review/dist holds a bundle built from the current sources. */
export function reviewBuilt(): boolean {
  const index = path.join(REVIEW_DIST, 'index.html');
  if (!existsSync(index)) return false;
  // The sources' newest mtime when the build started (written here), or for a bundle made by
  // `npm run build:review`, the time it was written.
  let built: number;
  try { built = Number(readFileSync(path.join(REVIEW_DIST, STAMP), 'utf8')); } catch { built = statSync(index).mtimeMs; }
  return built >= sourcesMtime();
}

let building: Promise<void> | null = null;

/** The bundle an installed package serves is missing: the install is incomplete (never built here). */
export class ReviewBundleMissing extends Error {}

/**
 * Builds the bundle unless an up-to-date one exists (one build at a time per process); in an installed
 * package, only checks that the packed bundle is there.
 */
export function ensureReviewBuilt(): Promise<void> {
  if (isInstalledPackage(PROJECT_DIR)) {
    return existsSync(path.join(REVIEW_DIST, 'index.html')) ? Promise.resolve()
      : Promise.reject(new ReviewBundleMissing(`this installation has no review page (${REVIEW_DIST} is missing): install the package again`));
  }
  if (reviewBuilt()) return Promise.resolve();
  building ??= (async () => {
    const mtime = sourcesMtime();
    const tmp = `${REVIEW_DIST}.tmp-${process.pid}-${Date.now()}`;
    const { build } = await import('vite');
    await build({ configFile: path.join(REVIEW_SRC, 'vite.config.ts'), build: { outDir: tmp, emptyOutDir: true }, logLevel: 'warn' });
    writeFileSync(path.join(tmp, STAMP), String(mtime));
    const old = `${REVIEW_DIST}.old-${process.pid}-${Date.now()}`;
    try { renameSync(REVIEW_DIST, old); } catch { /* none yet */ }
    try {
      renameSync(tmp, REVIEW_DIST);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // another process moved its build in first
    }
    rmSync(old, { recursive: true, force: true });
  })().finally(() => { building = null; });
  return building;
}

function reportFailure(e: unknown): void {
  if (e instanceof ReviewBundleMissing) console.error(`review page: ${e.message}`);
  else console.error('review page build failed:', e);
}

/** At the start of `gateway serve`: the bundle built now when missing or stale, rather than at its first visitor's request. */
export function prepareReview(): Promise<void> {
  return ensureReviewBuilt().catch(reportFailure);
}

export function isReviewPath(p: string): boolean {
  return p === '/review' || p.startsWith('/review/');
}

const HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

function csp(req: IncomingMessage): string {
  const host = req.headers.host ?? '127.0.0.1';
  return [
    "default-src 'none'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
    `connect-src 'self' ws://${host} wss://${host}`, "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
  ].join('; ');
}

/** Answers a request under /review: the page, its hashed assets, or 404. */
export async function serveReview(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const p = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', ...HEADERS }).end();
    return;
  }
  if (p === '/review') {
    res.writeHead(302, { location: '/review/', ...HEADERS }).end();
    return;
  }
  try {
    await ensureReviewBuilt();
  } catch (e) {
    reportFailure(e);
    res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', ...HEADERS }).end(e instanceof ReviewBundleMissing
      ? 'The review page is missing from this installation: install the package again.\n'
      : 'The review page could not be built (run npm run build:review).\n');
    return;
  }
  const rel = p === '/review/' || p === '/review/index.html' ? 'index.html' : p.slice('/review/'.length);
  // Only the files Vite writes: index.html and assets/<name>.<ext>, no other path reaches the disk.
  if (rel !== 'index.html' && !/^assets\/[A-Za-z0-9._-]+$/.test(rel)) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...HEADERS }).end('Not found\n');
    return;
  }
  let body: Buffer;
  try {
    body = await readFile(path.join(REVIEW_DIST, rel));
  } catch {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...HEADERS }).end('Not found\n');
    return;
  }
  res.writeHead(200, {
    'content-type': TYPES[path.extname(rel)] ?? 'application/octet-stream',
    'content-length': body.length,
    // Asset names carry a content hash; the page itself is always revalidated.
    'cache-control': rel === 'index.html' ? 'no-cache' : 'public, max-age=31536000, immutable',
    ...(rel === 'index.html' ? { 'content-security-policy': csp(req) } : {}),
    ...HEADERS,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
