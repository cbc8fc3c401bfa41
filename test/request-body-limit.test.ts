import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REQUEST_BODY_BYTES } from '../server/limits.js';
import { startTestGateway, type TestGateway } from './harness.js';

/**
 * The request body limit (server/limits.ts useRequestBodyLimit, in place of Yoga's): a body over the
 * limit is refused with 413 REQUEST_ENTITY_TOO_LARGE whether it says its length (Content-Length) or
 * not (chunked), and a body within it is answered, chunked or not.
 */
let g: TestGateway;
beforeAll(async () => { g = await startTestGateway({ sweepIntervalMs: 0 }); });
afterAll(async () => { await g?.stop(); });

/** POSTs `chunks` to /graphql, with a Content-Length or chunked; the status and the parsed body. */
function post(chunks: Buffer[], chunked: boolean): Promise<{ status: number; body: any }> {
  const u = new URL(g.url);
  const length = chunks.reduce((n, c) => n + c.length, 0);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${g.admin}`, ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(length) }) } }, (res) => {
      const got: Buffer[] = [];
      res.on('data', (c) => got.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(got).toString() || 'null') }));
    });
    // The server may answer (and close) before the whole body is sent: the answer is what is checked.
    req.on('error', (e) => { if ((e as NodeJS.ErrnoException).code !== 'EPIPE' && (e as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(e); });
    (async () => {
      for (const c of chunks) if (!req.write(c)) await new Promise((r) => req.once('drain', r));
      req.end();
    })().catch(() => {});
  });
}

/** A GraphQL request body padded with spaces to `size` bytes, in chunks of 1 MB. */
function body(size: number): Buffer[] {
  const json = Buffer.from(JSON.stringify({ query: '{ __typename }' }));
  const all = Buffer.alloc(size, ' ');
  json.copy(all, 0);
  const out: Buffer[] = [];
  for (let i = 0; i < size; i += 1 << 20) out.push(all.subarray(i, Math.min(size, i + (1 << 20))));
  return out;
}

describe('request body limit', () => {
  it('answers bodies within the limit, with a Content-Length or chunked', async () => {
    for (const chunked of [false, true]) {
      const r = await post(body(3 << 20), chunked);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ data: { __typename: 'Query' } });
    }
  });

  it('refuses a body over the limit by its Content-Length', async () => {
    const r = await post(body(MAX_REQUEST_BODY_BYTES + 1), false);
    expect(r.status).toBe(413);
    expect(r.body.errors[0].extensions.code).toBe('REQUEST_ENTITY_TOO_LARGE');
  });

  it('refuses a chunked body once it passes the limit', async () => {
    const r = await post(body(MAX_REQUEST_BODY_BYTES + (1 << 20)), true);
    expect(r.status).toBe(413);
    expect(r.body.errors[0].extensions.code).toBe('REQUEST_ENTITY_TOO_LARGE');
  });
});
