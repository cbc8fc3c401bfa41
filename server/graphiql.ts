import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { css, editorWorkerService, favicon, graphqlWorker, js, jsonWorker } from '@graphql-yoga/render-graphiql/graphiql';

const require = createRequire(import.meta.url);

/**
 * GraphiQL served by the gateway itself, with nothing loaded from a CDN: Yoga's GraphiQL bundle
 * (`@graphql-yoga/render-graphiql`) and graphql-ws' browser build come from node_modules and are
 * inlined into one page, built once per process.
 *
 * Two things Yoga's own page does not do, done by the fetcher below:
 * - subscriptions go over graphql-ws with the Headers tab's `Authorization` as
 *   `connectionParams.authorization` (one WebSocket per token), so they pass the gateway's auth;
 * - the schema introspection that GraphiQL runs when it opens waits, instead of failing, while the
 *   token is missing or refused, and runs again as soon as the Headers tab changes, so the Docs pane
 *   loads once a token is entered.
 */
const FETCHER = String.raw`
(function () {
  var endpoint = new URL(location.pathname, location.href).toString();
  var wsEndpoint = endpoint.replace(/^http/, 'ws');
  var latestHeaders = null;
  var headerWaiters = [];
  function parseHeaders(text) {
    try { var h = JSON.parse(text || '{}'); return h && typeof h === 'object' ? h : {}; } catch (e) { return null; }
  }
  function authorization(headers) {
    for (var k in headers || {}) if (k.toLowerCase() === 'authorization') return String(headers[k]);
    return undefined;
  }
  function nextHeaders() { return new Promise(function (r) { headerWaiters.push(r); }); }
  var quiet = null;
  window.__gatewayOnEditHeaders = function (text) {
    var h = parseHeaders(text);
    if (!h) return;
    latestHeaders = h;
    // Waiting introspections retry once typing pauses, not at every keystroke.
    clearTimeout(quiet);
    quiet = setTimeout(function () { headerWaiters.splice(0).forEach(function (w) { w(latestHeaders); }); }, 300);
  };
  // The type of the operation GraphiQL runs: the named one, else the first (comments and strings skipped).
  function operationType(query, name) {
    var src = query.replace(/"""[\s\S]*?"""|"(?:[^"\\\n]|\\.)*"|#[^\n]*/g, ' ');
    var depth = 0, re = /[{}()]|\b(query|mutation|subscription)\b\s*([_A-Za-z][_0-9A-Za-z]*)?/g, m, first = null;
    while ((m = re.exec(src))) {
      if (m[0] === '{' || m[0] === '(') { depth++; continue; }
      if (m[0] === '}' || m[0] === ')') { depth--; continue; }
      if (depth !== 0) continue;
      if (!first) first = m[1];
      if (name && m[2] === name) return m[1];
    }
    return first || 'query';
  }
  var clients = {};
  function wsClient(auth) {
    var key = auth || '';
    if (!clients[key]) {
      clients[key] = graphqlWs.createClient({
        url: wsEndpoint,
        connectionParams: auth ? { authorization: auth } : {},
        lazy: true,
        retryAttempts: 5,
        // A refused token (4403) or a revoked one (4401) is final: show it, do not spin.
        shouldRetry: function (e) { return !(e && (e.code === 4401 || e.code === 4403)); },
      });
    }
    return clients[key];
  }
  function closeReason(e) {
    if (e && e.code === 4403) return 'The WebSocket was refused (4403): put {"Authorization": "Bearer <token>"} in the Headers tab.';
    if (e && e.code === 4401) return 'The token was revoked (4401).';
    if (e && typeof e.code === 'number') return 'WebSocket closed (' + e.code + (e.reason ? ': ' + e.reason : '') + ').';
    if (Array.isArray(e)) return e.map(function (x) { return x.message; }).join('; ');
    return e && e.message ? e.message : String(e);
  }
  async function post(params, headers) {
    var res = await fetch(endpoint, {
      method: 'POST',
      headers: Object.assign({ 'content-type': 'application/json', accept: 'application/json' }, headers),
      body: JSON.stringify({ query: params.query, variables: params.variables, operationName: params.operationName }),
    });
    return { status: res.status, body: await res.json().catch(function () { return { errors: [{ message: 'HTTP ' + res.status }] }; }) };
  }
  window.__gatewayFetcher = function (params, opts) {
    var headers = (opts && opts.headers) || latestHeaders || {};
    if (operationType(params.query || '', params.operationName) === 'subscription') {
      var client = wsClient(authorization(headers));
      return {
        subscribe: function (observer) {
          var sink = typeof observer === 'function' ? { next: observer } : observer;
          var dispose = client.subscribe(
            { query: params.query, variables: params.variables, operationName: params.operationName },
            {
              next: function (v) { sink.next && sink.next(v); },
              error: function (e) { sink.next && sink.next({ errors: [{ message: closeReason(e) }] }); sink.complete && sink.complete(); },
              complete: function () { sink.complete && sink.complete(); },
            },
          );
          return { unsubscribe: dispose };
        },
      };
    }
    var introspection = /\b__schema\b/.test(params.query || '');
    return (async function run(h) {
      var r = await post(params, h);
      // Opening GraphiQL without a valid token: the schema loads as soon as one is entered.
      if (introspection && r.status === 401) {
        var seen = authorization(h);
        var next;
        do { next = await nextHeaders(); } while (authorization(next) === seen);
        return run(next);
      }
      return r.body;
    })(headers);
  };
})();
`;

export interface GraphiQLPageOptions {
  title?: string;
  /** Shown in the Headers tab when nothing is stored yet. */
  headers?: Record<string, string>;
}

let built: { html: string; etag: string; gzip: Buffer } | null = null;

export function graphiqlPage(opts: GraphiQLPageOptions = {}): { html: string; etag: string; gzip: Buffer } {
  if (built) return built;
  // graphql-ws' browser build (its `exports` do not list umd/, so it is found next to its main entry).
  const graphqlWs = readFileSync(path.join(path.dirname(require.resolve('graphql-ws')), '..', 'umd', 'graphql-ws.min.js'), 'utf8');
  const title = opts.title ?? 'Agent history gateway';
  const options = {
    title,
    headers: JSON.stringify(opts.headers ?? { Authorization: 'Bearer <paste a token: the admin token is printed at first start>' }, null, 2),
    defaultQuery: '# Put {"Authorization": "Bearer <token>"} in the Headers tab below; the Docs pane loads once it is accepted.\n\n{\n  sessions(first: 5) {\n    edges { node { id title status } }\n  }\n}\n',
  };
  const json = (s: unknown) => JSON.stringify(s).replace(/</g, '\\u003c');
  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${title.replace(/</g, '&lt;')}</title>
    <link rel="icon" href="${favicon}" />
    <style>${css}</style>
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript.</noscript>
    <div id="root"></div>
    <script>${graphqlWs.replace(/<\/script/gi, '<\\/script')}</script>
    <script>
      function prepareBlob(content) { return URL.createObjectURL(new Blob([content], { type: 'application/javascript' })); }
      const workers = {
        editorWorkerService: prepareBlob(${json(editorWorkerService)}),
        json: prepareBlob(${json(jsonWorker)}),
        graphql: prepareBlob(${json(graphqlWorker)}),
      };
      self['MonacoEnvironment'] = { globalAPI: false, getWorkerUrl: function (moduleId, label) { return workers[label]; } };
      ${FETCHER}
      ${js};
      YogaGraphiQL.renderYogaGraphiQL(
        window.document.querySelector('#root'),
        Object.assign(${json(options)}, { fetcher: window.__gatewayFetcher, onEditHeaders: window.__gatewayOnEditHeaders }),
      );
    </script>
  </body>
</html>`;
  // About 9 MB of HTML, 2.5 MB gzipped: compressed once, sent to every browser that accepts it.
  built = { html, etag: `"${createHash('sha256').update(html).digest('base64url').slice(0, 27)}"`, gzip: gzipSync(html) };
  return built;
}

/** GET /graphql from a browser (Accept: text/html): the page, cached by ETag. */
export function wantsGraphiQL(req: IncomingMessage): boolean {
  return req.method === 'GET' && (req.headers.accept ?? '').includes('text/html');
}

export function serveGraphiQL(req: IncomingMessage, res: ServerResponse): void {
  const page = graphiqlPage();
  if (req.headers['if-none-match'] === page.etag) {
    res.writeHead(304, { etag: page.etag }).end();
    return;
  }
  const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = gzip ? page.gzip : Buffer.from(page.html);
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    etag: page.etag,
    'cache-control': 'no-cache',
    vary: 'accept-encoding',
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    'content-length': body.length,
  }).end(body);
}
