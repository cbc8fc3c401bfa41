import { GatewayClient, GraphQLRequestError } from '../../client/index.js';

/**
 * The page's one connection to the gateway: the project's typed client, with the browser's own
 * WebSocket for subscriptions. The token lives in sessionStorage only (gone when the tab closes,
 * never in the URL, a cookie or localStorage); another tab of the page may hand it over (askOtherTabs).
 */
const KEY = 'gateway.review.token';

export function storedToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function storeToken(token: string | null): void {
  if (token) sessionStorage.setItem(KEY, token);
  else sessionStorage.removeItem(KEY);
}

/**
 * A token handed from one tab of the page to another over a BroadcastChannel (same origin only; nothing is written
 * anywhere): a tab opened without one (a link opened in a new tab) asks, and an open tab that holds a token answers.
 * Signing out in one tab signs out every tab, so a token dropped in one is not handed back by another.
 */
type TabMessage = { type: 'ask'; from: string } | { type: 'token'; to: string; token: string } | { type: 'signed-out' };
// crypto.randomUUID needs a secure context; a gateway served over plain HTTP on another host is not one.
const tabID = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
const channel = typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel('gateway.review');
const handoffListeners = new Set<(token: string) => void>();
const signedOutListeners = new Set<() => void>();

channel?.addEventListener('message', (ev: MessageEvent<TabMessage>) => {
  const m = ev.data;
  if (m?.type === 'ask') {
    const token = storedToken();
    if (token) channel.postMessage({ type: 'token', to: m.from, token } satisfies TabMessage);
  } else if (m?.type === 'token' && m.to === tabID && !storedToken()) {
    for (const fn of handoffListeners) fn(m.token);
  } else if (m?.type === 'signed-out' && storedToken()) {
    for (const fn of signedOutListeners) fn();
  }
});

/** Asks the other open tabs of the page for their token: `onToken` gets each one handed over, until the returned function stops it. */
export function askOtherTabs(onToken: (token: string) => void): () => void {
  if (!channel) return () => {};
  handoffListeners.add(onToken);
  channel.postMessage({ type: 'ask', from: tabID } satisfies TabMessage);
  return () => handoffListeners.delete(onToken);
}

/** Runs `fn` when another tab signs out. */
export function onSignedOutElsewhere(fn: () => void): void {
  signedOutListeners.add(fn);
}

type LiveState = 'connecting' | 'connected' | 'reconnecting' | 'offline';
const liveListeners = new Set<(s: LiveState) => void>();
export function onLiveState(fn: (s: LiveState) => void): () => void {
  liveListeners.add(fn);
  return () => liveListeners.delete(fn);
}
function setLive(s: LiveState) { for (const fn of liveListeners) fn(s); }

/** The browser's WebSocket, reporting its state to the page's live indicator. */
class TrackedWebSocket extends WebSocket {
  constructor(url: string | URL, protocols?: string | string[]) {
    super(url, protocols);
    setLive('connecting');
    this.addEventListener('open', () => setLive('connected'));
    this.addEventListener('close', (e) => setLive(e.code === 1000 ? 'offline' : 'reconnecting'));
  }
}

let client: GatewayClient | null = null;
let clientToken: string | null = null;

export function gateway(): GatewayClient {
  const token = storedToken();
  if (!token) throw new SignedOut();
  if (!client || clientToken !== token) {
    void client?.close();
    const ws = location.protocol === 'https:' ? 'wss:' : 'ws:';
    client = new GatewayClient({
      url: `${location.origin}/graphql`,
      wsUrl: `${ws}//${location.host}/graphql`,
      token,
      webSocketImpl: TrackedWebSocket,
    });
    clientToken = token;
  }
  return client;
}

/** Drops the token; `everywhere` (the Sign out button) tells the other tabs to drop theirs too. */
export async function signOut(everywhere = false): Promise<void> {
  storeToken(null);
  if (everywhere) channel?.postMessage({ type: 'signed-out' } satisfies TabMessage);
  await client?.close();
  client = null;
  clientToken = null;
}

export class SignedOut extends Error {
  constructor(message = 'Enter a token to read the gateway.') { super(message); }
}

/** An HTTP 401 (bad or revoked token) or a WebSocket refusal (4401/4403) means: ask for a token again. */
export function isAuthFailure(e: unknown): boolean {
  if (e instanceof SignedOut) return true;
  if (e instanceof GraphQLRequestError) return e.status === 401;
  const code = (e as { code?: number } | null)?.code;
  return code === 4401 || code === 4403;
}

/**
 * What the sign-in form says after an auth failure: the gateway's own words over HTTP (which it was, and the
 * command that makes a token), a revocation while the page was open, or a refused WebSocket.
 */
export function authFailureMessage(e: unknown): string {
  const make = 'gateway token create --role reader makes one where the gateway runs';
  if (e instanceof SignedOut) return e.message;
  if (e instanceof GraphQLRequestError && e.status === 401 && e.errors[0]?.message) return `${e.errors[0].message} Enter another one.`;
  if ((e as { code?: number } | null)?.code === 4401) return `The gateway refused the token: it was revoked while the page was open. Enter another one (${make}).`;
  return `The gateway refused the token (unknown or revoked). Enter another one (${make}).`;
}

/** Checks a token before keeping it: the cheapest read a reader token may make. */
export async function checkToken(token: string): Promise<void> {
  const res = await fetch(`${location.origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ __typename }' }),
  });
  if (res.status === 401) {
    // The gateway says which it was (none, not a token, unknown or revoked) and the command that makes one.
    const said = await res.json().then((b: { errors?: { message?: unknown; extensions?: { reason?: unknown } }[] }) => b.errors?.[0], () => undefined);
    if (said?.extensions?.reason === 'MALFORMED') throw new Error('This is not a gateway token: paste the whole gw_… line that gateway token create printed (not its tok_… ID).');
    throw new Error(typeof said?.message === 'string' && said.message ? said.message : 'The gateway refused this token (unknown or revoked).');
  }
  if (!res.ok) throw new Error(`The gateway answered HTTP ${res.status}.`);
}
