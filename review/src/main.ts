import './style.css';
import { askOtherTabs, authFailureMessage, checkToken, gateway, isAuthFailure, onLiveState, onSignedOutElsewhere, signOut, storeToken, storedToken } from './api.js';
import { errorBox, h, refreshTimes, setTitle } from './dom.js';
import { ExecutionView } from './views/execution.js';
import { DriftView, RangeView } from './views/range.js';
import { BlameView } from './views/attribution.js';
import { sessionView } from './views/session.js';
import { sessionsView } from './views/sessions.js';

type Route =
  | { name: 'sessions' }
  | { name: 'session'; id: string }
  | { name: 'range'; id: string; from: string; to: string; path: string | null; line: string | null }
  | { name: 'drift'; id: string; path: string | null; line: string | null }
  | { name: 'execution'; id: string; path: string | null; line: string | null }
  | { name: 'blame'; id: string; execution: string; side: 'START' | 'END'; path: string };

/**
 * Hash routes: #/ · #/session/<id> · #/execution/<id>[/file/<path>] · #/execution/<id>/drift[/file/<path>]
 * · #/session/<id>/changes/<from>/<to>[/file/<path>] · #/session/<id>/blame/<execution>/<START|END>/<path>; a file's route may name one line of its diff, ?line=L12 (the
 * old side's line 12) or ?line=R12 (the new side's): a permalink.
 */
export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [pathPart, query] = raw.split('?');
  const seg = pathPart.split('/');
  const line = new URLSearchParams(query ?? '').get('line');
  const fileAt = (i: number) => (seg[i] === 'file' && seg.length > i + 1 ? decodeURIComponent(seg.slice(i + 1).join('/')) : null);
  if (seg[0] === 'session' && seg[1] && seg[2] === 'changes' && seg[3] && seg[4]) {
    return { name: 'range', id: decodeURIComponent(seg[1]), from: decodeURIComponent(seg[3]), to: decodeURIComponent(seg[4]), path: fileAt(5), line };
  }
  if (seg[0] === 'session' && seg[1] && seg[2] === 'blame' && seg[3] && (seg[4] === 'START' || seg[4] === 'END') && seg.length > 5) {
    return { name: 'blame', id: decodeURIComponent(seg[1]), execution: decodeURIComponent(seg[3]), side: seg[4], path: decodeURIComponent(seg.slice(5).join('/')) };
  }
  if (seg[0] === 'session' && seg[1]) return { name: 'session', id: decodeURIComponent(seg[1]) };
  if (seg[0] === 'execution' && seg[1] && seg[2] === 'drift') return { name: 'drift', id: decodeURIComponent(seg[1]), path: fileAt(3), line };
  if (seg[0] === 'execution' && seg[1]) return { name: 'execution', id: decodeURIComponent(seg[1]), path: fileAt(2), line };
  return { name: 'sessions' };
}

const app = document.getElementById('app')!;
const live = document.getElementById('live')!;
const signOutButton = document.getElementById('signout') as HTMLButtonElement;
let closeView: (() => void) | null = null;
/** The open page of a changeset, with its key: a later route to one of its files only scrolls to it. */
let changeset: { key: string; view: { select(path: string, line: string | null): void } } | null = null;

/** What the live badge means in each state (its tooltip and accessible description). */
const LIVE_MEANING: Record<string, string> = {
  connected: 'Live: this page is subscribed to the gateway (graphql-ws). Executions that settle and changes to the session '
    + '(its status, messages, jobs) appear without a reload. The number counts the updates received since the page opened.',
  connecting: 'Connecting to the gateway for live updates…',
  reconnecting: 'The live connection dropped; reconnecting. Nothing is missed: the page resumes from the last update it received.',
  offline: 'Not live: this page has no subscription open (this view has nothing to follow, or no one is signed in). Reload to see later changes.',
};
let liveEvents = 0;
function setLive(state: string, text = state) {
  live.dataset.state = state;
  live.textContent = text;
  live.title = LIVE_MEANING[state] ?? state;
  live.setAttribute('aria-label', `${text}. ${live.title}`);
}
onLiveState((s) => setLive(s, s === 'connected' ? `live · ${liveEvents}` : s === 'offline' ? 'not live' : s));
document.addEventListener('live-event', () => { liveEvents++; if (live.dataset.state === 'connected') setLive('connected', `live · ${liveEvents}`); });
document.addEventListener('live-error', (e) => handleError((e as CustomEvent).detail));
app.addEventListener('view-error', (e) => handleError((e as CustomEvent).detail));

function handleError(e: unknown) {
  if (isAuthFailure(e)) {
    void signOut().then(() => signIn(authFailureMessage(e)));
    return;
  }
  app.append(errorBox(Array.isArray(e) ? e.map((x) => x?.message ?? String(x)).join('; ') : e));
}

/** Stops asking the other tabs for a token (the sign-in form is gone). */
let stopAsking = () => {};

/**
 * The sign-in form. Without a `message` (the tab has never had a token: a link opened in a new tab), it also asks
 * the other open tabs of the page for theirs, and goes on with the first one the gateway accepts.
 */
function signIn(message?: string) {
  closeView?.();
  closeView = null;
  changeset = null;
  stopAsking();
  signOutButton.hidden = true;
  setLive('offline', 'not live');
  setTitle('Sign in');
  const input = h('input', { type: 'password', name: 'token', id: 'token', autocomplete: 'off', required: true, placeholder: 'gw_…', spellcheck: 'false' });
  const status = h('p', { class: 'muted', role: 'status' }, message ?? '');
  const form = h('form', { class: 'sign-in' },
    h('h1', {}, 'Sign in'),
    h('p', {}, 'Paste a gateway token (a reader token is enough). It is kept in this tab\'s sessionStorage only: never in the URL, gone when the tab closes. '
      + 'A tab of this page opened while another one is signed in is handed its token.'),
    h('label', { for: 'token' }, 'Token'), input,
    h('button', { type: 'submit' }, 'Open'),
    status);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    status.textContent = 'Checking…';
    try {
      const token = input.value.trim();
      await checkToken(token);
      storeToken(token);
      route();
    } catch (e) {
      status.textContent = e instanceof Error ? e.message : String(e);
      status.className = 'error-box';
    }
  });
  app.replaceChildren(form);
  input.focus();
  if (message === undefined) {
    stopAsking = askOtherTabs((token) => {
      checkToken(token).then(() => {
        if (storedToken() || !form.isConnected) return;
        storeToken(token);
        route();
      }, () => { /* refused here too: the form stays */ });
    });
  }
}

/** The title a route has until its view names what it shows. */
const ROUTE_TITLE: Record<Route['name'], string> = {
  sessions: 'Sessions', session: 'Session', range: 'Changes', drift: 'Drift', execution: 'Execution', blame: 'Blame',
};

function route() {
  if (!storedToken()) return signIn();
  stopAsking();
  signOutButton.hidden = false;
  gateway();
  const r = parseRoute(location.hash);
  const key = r.name === 'execution' ? `execution.${r.id}` : r.name === 'drift' ? `drift.${r.id}` : r.name === 'range' ? `range.${r.id}.${r.from}.${r.to}` : null;
  if (key && changeset?.key === key) {
    if ('line' in r && r.path) changeset.view.select(r.path, r.line);
    return;
  }
  closeView?.();
  changeset = null;
  window.scrollTo(0, 0);
  setTitle(ROUTE_TITLE[r.name]);
  if (r.name === 'sessions') closeView = sessionsView(app);
  else if (r.name === 'session') closeView = sessionView(app, r.id);
  else if (r.name === 'blame') {
    const v = new BlameView(app, r.id, r.execution, r.side, r.path);
    closeView = () => v.close();
  } else {
    const v = r.name === 'execution' ? new ExecutionView(app, r.id, r.path, r.line)
      : r.name === 'drift' ? new DriftView(app, r.id, r.path, r.line)
        : new RangeView(app, r.id, r.from, r.to, r.path, r.line);
    changeset = { key: key!, view: v };
    closeView = () => v.close();
  }
}

signOutButton.addEventListener('click', async () => { await signOut(true); signIn('Signed out.'); });
onSignedOutElsewhere(() => { void signOut().then(() => signIn('Signed out in another tab.')); });
window.addEventListener('hashchange', route);
// Relative dates ("5 minutes ago") stay true while the page is open.
setInterval(() => refreshTimes(app), 60_000);
route();
