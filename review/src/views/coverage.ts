import { badge, bytes, h, time } from '../dom.js';

type Coverage =
  | { __typename: 'CoverageComplete'; fileCount: number }
  | { __typename: 'CoverageOmitted'; omissions: { path: string; reason: string; detail: string }[] }
  | { __typename: 'CoverageUnavailable'; reason: string; detail: string }
  | { __typename: string };

/** The coverage of a changeset, first on its page: complete, with omissions (each listed), or unavailable. */
export function coverageBanner(c: Coverage, what = 'this execution'): HTMLElement {
  if (c.__typename === 'CoverageComplete' && 'fileCount' in c) {
    return h('section', { class: 'coverage coverage-complete', 'data-coverage': 'COMPLETE', role: 'status' },
      h('h2', {}, '✔ Coverage complete'),
      h('p', {}, c.fileCount === 0
        ? `Both boundaries were captured and nothing was left out: ${what} changed nothing.`
        : `Both boundaries were captured and nothing was left out: the ${c.fileCount} changed file${c.fileCount === 1 ? ' is' : 's are'} all shown below.`));
  }
  if (c.__typename === 'CoverageOmitted' && 'omissions' in c) {
    const byReason = new Map<string, number>();
    for (const o of c.omissions) byReason.set(o.reason, (byReason.get(o.reason) ?? 0) + 1);
    return h('section', { class: 'coverage coverage-omitted', 'data-coverage': 'OMITTED', role: 'alert' },
      h('h2', {}, `⚠ Coverage incomplete: ${c.omissions.length} omission${c.omissions.length === 1 ? '' : 's'}`),
      h('p', {}, 'The changes below are real, but some evidence is missing. What was left out, and why: ',
        ...[...byReason].map(([r, n]) => badge(`${r} × ${n}`, 'warn'))),
      h('div', { class: 'omissions-scroll' }, h('table', { class: 'omissions' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Path'), h('th', {}, 'Reason'), h('th', {}, 'Detail'))),
        h('tbody', {}, ...c.omissions.map((o) => h('tr', { class: 'omission', 'data-reason': o.reason, 'data-path': o.path },
          h('td', {}, h('code', {}, o.path)), h('td', {}, badge(o.reason, 'warn')), h('td', {}, o.detail)))))));
  }
  if (c.__typename === 'CoverageUnavailable' && 'reason' in c) {
    return h('section', { class: 'coverage coverage-unavailable', 'data-coverage': 'UNAVAILABLE', role: 'alert' },
      h('h2', {}, `✖ Coverage unavailable: ${c.reason}`),
      h('p', {}, c.detail || `The gateway cannot say what ${what} changed.`));
  }
  return h('section', { class: 'coverage' }, 'Unknown coverage');
}

const UNAVAILABLE_WHY: Record<string, string> = {
  BOUNDARY_UNAVAILABLE: 'a boundary snapshot of the worktree was not captured',
  EXPIRED: 'its boundary snapshots expired under retention',
  NOT_SETTLED: 'it has not settled yet',
};

/** Why a changeset's coverage is unavailable, in words (the reason code stays in the banner). */
export function unavailableWhy(reason: string): string {
  return UNAVAILABLE_WHY[reason] ?? reason;
}

interface Counts { fileCount: number; additions: number; deletions: number; coverage: Coverage }

/**
 * A changeset's counts ("3 files changed +10 −2"), or, when its coverage is unavailable, that what changed is
 * unknown and why: an unknown changeset is never shown as a count of zero.
 */
export function changeTotals(cs: Counts): HTMLElement {
  const c = cs.coverage;
  if (c.__typename === 'CoverageUnavailable') {
    const reason = 'reason' in c ? c.reason : '';
    const detail = 'detail' in c ? c.detail : '';
    return h('div', { class: 'totals totals-unknown', 'data-totals': 'UNKNOWN' },
      h('strong', { class: 'file-count' }, 'Changed files unknown'), ' ',
      h('span', { class: 'why' }, `(${unavailableWhy(reason)}${detail ? `: ${detail}` : ''})`));
  }
  return h('div', { class: 'totals', 'data-totals': 'KNOWN' },
    h('strong', { class: 'file-count' }, `${cs.fileCount} file${cs.fileCount === 1 ? '' : 's'} changed`), ' ',
    h('span', { class: 'add' }, `+${cs.additions}`), ' ', h('span', { class: 'del' }, `−${cs.deletions}`));
}

export function snapshotFacts(label: string, s: { id: string; capturedAt: string; fileCount: number; byteSize: number }): HTMLElement {
  return h('div', { class: `snapshot snapshot-${label.toLowerCase()}` },
    h('h3', {}, label),
    h('code', { class: 'snapshot-id' }, s.id), h('br'),
    'captured ', time(s.capturedAt), h('br'),
    `${s.fileCount} files · ${bytes(s.byteSize)}`);
}
