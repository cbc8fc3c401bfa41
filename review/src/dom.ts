/** A few DOM helpers: elements are built with text nodes, never from HTML strings. */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | ((e: any) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, '').toLowerCase(), v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function badge(text: string, kind: string, title?: string): HTMLElement {
  return h('span', { class: `badge badge-${kind}`, title: title ?? null }, text);
}

export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge status status-${status.toLowerCase()}`, 'data-status': status }, status);
}

/** The page's title: what it shows, most specific first, then the application's name. */
export function setTitle(...parts: (string | null | undefined)[]): void {
  document.title = [...parts.filter((x): x is string => !!x), 'Review'].join(' · ');
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [['year', 365 * 86_400_000], ['month', 30 * 86_400_000], ['week', 7 * 86_400_000],
  ['day', 86_400_000], ['hour', 3_600_000], ['minute', 60_000], ['second', 1_000]];
const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** "3 minutes ago", "yesterday": how long ago an instant was, from `now`. */
export function relative(iso: string, now = Date.now()): string {
  const ms = new Date(iso).getTime() - now;
  if (Math.abs(ms) < 45_000) return 'just now';
  const [unit, size] = UNITS.find(([, size]) => Math.abs(ms) >= size) ?? UNITS[UNITS.length - 1];
  return relativeFormat.format(Math.round(ms / size), unit);
}

/** An instant as a relative date ("5 minutes ago"), the absolute one on hover; refreshTimes keeps it current. */
export function time(iso: string | null | undefined): HTMLElement | string {
  if (!iso) return '—';
  const absolute = new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  return h('time', { datetime: iso, title: absolute, class: 'relative' }, relative(iso));
}

/** Brings every relative date of the page up to now (the page calls it every minute). */
export function refreshTimes(root: ParentNode = document): void {
  const now = Date.now();
  for (const t of root.querySelectorAll<HTMLTimeElement>('time.relative')) t.textContent = relative(t.dateTime, now);
}

export function duration(fromIso: string, toIso: string | null | undefined): string {
  if (!toIso) return 'running';
  const ms = new Date(toIso).getTime() - new Date(fromIso).getTime();
  if (ms < 1_000) return `${ms} ms`;
  const s = ms / 1_000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function link(href: string, ...children: Child[]): HTMLAnchorElement {
  return h('a', { href }, ...children);
}

export function loading(what = 'Loading…'): HTMLElement {
  return h('p', { class: 'muted loading' }, what);
}

export function errorBox(e: unknown): HTMLElement {
  const msg = e instanceof Error ? e.message : String(e);
  return h('div', { class: 'error-box', role: 'alert' }, msg);
}
