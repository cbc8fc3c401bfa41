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
 * served as static files beside a small page (see graphiqlPage), built once per process.
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
    if (e && e.code === 4403) return 'The WebSocket was refused (4403' + (e.reason ? ': ' + e.reason : '') + '): put {"Authorization": "Bearer <token>"} in the Headers tab.';
    if (e && e.code === 4401) return 'The token was revoked (4401' + (e.reason ? ': ' + e.reason : '') + ').';
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

/**
 * The Headers tab holds the token. GraphiQL keeps it in localStorage (`graphiql:headers`, and each tab's in
 * `graphiql:tabState`) only when the user asked for it (GraphiQL's "Persist headers" setting); what an
 * earlier page stored without that choice (Yoga's page persists headers by default) is removed before
 * GraphiQL starts, so a token does not outlive the tab unless asked to.
 */
const FORGET_HEADERS = String.raw`(function () {
  try {
    var storage = window.localStorage;
    if (storage.getItem('graphiql:shouldPersistHeaders') === 'true') return;
    storage.removeItem('graphiql:headers');
    var tabs = storage.getItem('graphiql:tabState');
    if (tabs) storage.setItem('graphiql:tabState', JSON.stringify(JSON.parse(tabs), function (key, value) { return key === 'headers' ? null : value; }));
  } catch (e) { /* no storage, or not GraphiQL's: nothing kept */ }
})();`;

export interface GraphiQLPageOptions {
  title?: string;
  /** Shown in the Headers tab when nothing is stored yet. */
  headers?: Record<string, string>;
}

interface Asset { body: Buffer; gzip: Buffer; type: string; etag: string }

function asset(content: string | Buffer, type: string): Asset {
  const body = typeof content === 'string' ? Buffer.from(content) : content;
  return { body, gzip: gzipSync(body), type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/** Where the assets are, relative to the page at /graphql; the hash of their contents makes each URL immutable. */
const ASSET_ROOT = '/graphiql/';
let built: { page: Asset; assets: Map<string, Asset>; prefix: string } | null = null;

/**
 * The page (a few hundred bytes of HTML, `no-cache` with an ETag) and its assets: GraphiQL's bundle, its
 * CSS, the editor's three workers, graphql-ws' browser build, the fetcher and the start script, each served
 * gzipped from /graphiql/<hash>/<file> with `immutable` caching, so a browser loads them once per version
 * (the page used to inline all of it: 9 MB of HTML parsed at every visit). Built once per process.
 */
export function graphiqlPage(opts: GraphiQLPageOptions = {}): { page: Asset; assets: Map<string, Asset>; prefix: string } {
  if (built) return built;
  // graphql-ws' browser build (its `exports` do not list umd/, so it is found next to its main entry).
  const graphqlWs = readFileSync(path.join(path.dirname(require.resolve('graphql-ws')), '..', 'umd', 'graphql-ws.min.js'), 'utf8');
  const title = opts.title ?? 'Agent history gateway';
  const options = {
    title,
    headers: JSON.stringify(opts.headers ?? { Authorization: 'Bearer <paste a token: the admin token is printed at first start>' }, null, 2),
    defaultQuery: '# Put {"Authorization": "Bearer <token>"} in the Headers tab below; the Docs pane loads once it is accepted.\n\n{\n  sessions(first: 5) {\n    edges { node { id title status } }\n  }\n}\n',
  };
  const files: Record<string, Asset> = {
    'graphiql.css': asset(css, 'text/css; charset=utf-8'),
    'graphql-ws.js': asset(graphqlWs, 'text/javascript; charset=utf-8'),
    'editor.worker.js': asset(editorWorkerService, 'text/javascript; charset=utf-8'),
    'json.worker.js': asset(jsonWorker, 'text/javascript; charset=utf-8'),
    'graphql.worker.js': asset(graphqlWorker, 'text/javascript; charset=utf-8'),
    'graphiql.js': asset(js, 'text/javascript; charset=utf-8'),
    'favicon.ico': asset(Buffer.from(favicon.slice(favicon.indexOf(',') + 1), 'base64'), 'image/x-icon'),
  };
  const hash = createHash('sha256');
  for (const [name, a] of Object.entries(files)) hash.update(name).update(a.etag);
  hash.update(FETCHER).update(FORGET_HEADERS).update(JSON.stringify(options));
  const version = hash.digest('base64url').slice(0, 16);
  // Relative to the page (/graphql), so the gateway works under a path prefix too.
  const rel = `graphiql/${version}/`;
  // The workers are found relative to the page's URL; the fetcher sets up subscriptions and the token wait.
  files['setup.js'] = asset(`self['MonacoEnvironment'] = { globalAPI: false, getWorkerUrl: function (moduleId, label) {
  return new URL(${JSON.stringify(rel)} + ({ editorWorkerService: 'editor', json: 'json', graphql: 'graphql' }[label] || 'editor') + '.worker.js', document.baseURI).toString();
} };
${FETCHER}`, 'text/javascript; charset=utf-8');
  files['start.js'] = asset(`${FORGET_HEADERS}
YogaGraphiQL.renderYogaGraphiQL(
  window.document.querySelector('#root'),
  // shouldPersistHeaders undefined (Yoga's page sets true): headers are kept only once the user turns
  // "Persist headers" on in GraphiQL's settings, which then shows that switch.
  Object.assign(${JSON.stringify(options)}, { shouldPersistHeaders: undefined, fetcher: window.__gatewayFetcher, onEditHeaders: window.__gatewayOnEditHeaders }),
);
`, 'text/javascript; charset=utf-8');
  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${title.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</title>
    <link rel="icon" href="${rel}favicon.ico" />
    <link rel="stylesheet" href="${rel}graphiql.css" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript.</noscript>
    <div id="root"></div>
    <script src="${rel}graphql-ws.js"></script>
    <script src="${rel}setup.js"></script>
    <script src="${rel}graphiql.js"></script>
    <script src="${rel}start.js"></script>
  </body>
</html>
`;
  built = { page: asset(html, 'text/html; charset=utf-8'), assets: new Map(Object.entries(files)), prefix: `${ASSET_ROOT}${version}/` };
  return built;
}

/** GET /graphql from a browser (Accept: text/html): the page, cached by ETag. */
export function wantsGraphiQL(req: IncomingMessage): boolean {
  return req.method === 'GET' && (req.headers.accept ?? '').includes('text/html');
}

export function isGraphiQLAsset(urlPath: string): boolean {
  return urlPath.startsWith(ASSET_ROOT);
}

function send(req: IncomingMessage, res: ServerResponse, a: Asset, cacheControl: string): void {
  if (req.headers['if-none-match'] === a.etag) {
    res.writeHead(304, { etag: a.etag, 'cache-control': cacheControl }).end();
    return;
  }
  const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = gzip ? a.gzip : a.body;
  res.writeHead(200, {
    'content-type': a.type,
    etag: a.etag,
    'cache-control': cacheControl,
    vary: 'accept-encoding',
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    'content-length': body.length,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

export function serveGraphiQL(req: IncomingMessage, res: ServerResponse): void {
  send(req, res, graphiqlPage().page, 'no-cache');
}

/** /graphiql/<version>/<file>: an asset of the current page, cached for good; any other version is a 404. */
export function serveGraphiQLAsset(req: IncomingMessage, res: ServerResponse, urlPath: string): void {
  const { assets, prefix } = graphiqlPage();
  const a = urlPath.startsWith(prefix) ? assets.get(urlPath.slice(prefix.length)) : undefined;
  if (!a || (req.method !== 'GET' && req.method !== 'HEAD')) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-cache' }).end('not found\n');
    return;
  }
  send(req, res, a, 'public, max-age=31536000, immutable');
}
