import './style.css';
import { checkToken, gateway, isAuthFailure, onLiveState, signOut, storeToken, storedToken } from './api.js';
import { errorBox, h } from './dom.js';
import { ExecutionView } from './views/execution.js';
import { sessionView } from './views/session.js';
import { sessionsView } from './views/sessions.js';

type Route =
  | { name: 'sessions' }
  | { name: 'session'; id: string }
  | { name: 'execution'; id: string; path: string | null };

/** Hash routes: #/ · #/session/<id> · #/execution/<id> · #/execution/<id>/file/<path>. */
export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [pathPart] = raw.split('?');
  const seg = pathPart.split('/');
  if (seg[0] === 'session' && seg[1]) return { name: 'session', id: decodeURIComponent(seg[1]) };
  if (seg[0] === 'execution' && seg[1]) {
    const path = seg[2] === 'file' && seg.length > 3 ? decodeURIComponent(seg.slice(3).join('/')) : null;
    return { name: 'execution', id: decodeURIComponent(seg[1]), path };
  }
  return { name: 'sessions' };
}

const app = document.getElementById('app')!;
const live = document.getElementById('live')!;
const signOutButton = document.getElementById('signout') as HTMLButtonElement;
let closeView: (() => void) | null = null;
let changeset: ExecutionView | null = null;

function setLive(state: string, text = state) {
  live.dataset.state = state;
  live.textContent = text;
}
let liveEvents = 0;
onLiveState((s) => setLive(s, s === 'connected' ? `live · ${liveEvents}` : s === 'offline' ? 'not live' : s));
document.addEventListener('live-event', () => { liveEvents++; if (live.dataset.state === 'connected') live.textContent = `live · ${liveEvents}`; });
document.addEventListener('live-error', (e) => handleError((e as CustomEvent).detail));
app.addEventListener('view-error', (e) => handleError((e as CustomEvent).detail));

function handleError(e: unknown) {
  if (isAuthFailure(e)) {
    void signOut().then(() => signIn('The gateway refused the token (unknown, revoked or expired). Enter another one.'));
    return;
  }
  app.append(errorBox(Array.isArray(e) ? e.map((x) => x?.message ?? String(x)).join('; ') : e));
}

function signIn(message?: string) {
  closeView?.();
  closeView = null;
  changeset = null;
  signOutButton.hidden = true;
  setLive('offline', 'not live');
  const input = h('input', { type: 'password', name: 'token', id: 'token', autocomplete: 'off', required: true, placeholder: 'gw_…', spellcheck: 'false' });
  const status = h('p', { class: 'muted', role: 'status' }, message ?? '');
  const form = h('form', { class: 'sign-in' },
    h('h1', {}, 'Sign in'),
    h('p', {}, 'Paste a gateway token (a reader token is enough). It is kept in this tab\'s sessionStorage only: never in the URL, gone when the tab closes.'),
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
}

function route() {
  if (!storedToken()) return signIn();
  signOutButton.hidden = false;
  gateway();
  const r = parseRoute(location.hash);
  if (r.name === 'execution' && changeset?.executionID === r.id) {
    if (r.path) changeset.select(r.path);
    return;
  }
  closeView?.();
  changeset = null;
  window.scrollTo(0, 0);
  if (r.name === 'sessions') closeView = sessionsView(app);
  else if (r.name === 'session') closeView = sessionView(app, r.id);
  else {
    const v = new ExecutionView(app, r.id, r.path);
    changeset = v;
    closeView = () => v.close();
  }
}

signOutButton.addEventListener('click', async () => { await signOut(); signIn('Signed out.'); });
window.addEventListener('hashchange', route);
route();
