// The documentation's links, as a reader follows them on GitHub: every relative link and image of README.md,
// docs/**/*.md, client/README.md and the examples' READMEs names a file or folder of the repository, and every
// #anchor a heading of its page (GitHub's anchors). Every page of docs/ can be reached from README.md. No server.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_DIR } from '../db/index.js';

/** The Markdown files whose links are checked, relative to the project. */
function pages(): string[] {
  const found: string[] = ['README.md', 'client/README.md'];
  const walk = (dir: string, keep: (f: string) => boolean) => {
    for (const e of fs.readdirSync(path.join(PROJECT_DIR, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, e.name);
      if (e.isDirectory()) walk(rel, keep);
      else if (keep(e.name)) found.push(rel);
    }
  };
  walk('docs', (f) => f.endsWith('.md'));
  walk('examples', (f) => f === 'README.md');
  return found;
}

/** The text outside fenced code blocks, with each inline code span's text kept but made inert (no link inside it). */
function prose(markdown: string): string {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
    .replace(/`+[^`\n]*`+/g, (code) => code.replace(/[[\]()]/g, ' '));
}

/** GitHub's anchor of a heading (github-slugger): lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown page's headings, repeated ones numbered as GitHub numbers them. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const text = fs.readFileSync(file, 'utf8').replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const m of text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

interface Link { page: string; target: string; line: number }

/** Every inline link and image of a page (`[text](target)`, `![alt](target "title")`). */
function links(page: string): Link[] {
  const text = prose(fs.readFileSync(path.join(PROJECT_DIR, page), 'utf8'));
  const out: Link[] = [];
  for (const m of text.matchAll(/!?\[(?:[^\][]|\[[^\]]*\])*\]\(\s*<?([^\s)>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    out.push({ page, target: m[1], line: text.slice(0, m.index).split('\n').length });
  }
  return out;
}

const external = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** Why a relative link does not resolve, or null when it does. */
function broken({ page, target }: Link): string | null {
  const [rawPath, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = rawPath ? path.resolve(path.dirname(path.join(PROJECT_DIR, page)), decodeURIComponent(rawPath)) : path.join(PROJECT_DIR, page);
  if (!file.startsWith(PROJECT_DIR + path.sep) && file !== PROJECT_DIR) return 'leaves the repository';
  if (!fs.existsSync(file)) return `no such file: ${path.relative(PROJECT_DIR, file)}`;
  if (anchor === undefined) return null;
  if (!file.endsWith('.md')) return `an anchor into a file that is not Markdown: ${path.relative(PROJECT_DIR, file)}`;
  return anchors(file).has(anchor) ? null : `no heading #${anchor} in ${path.relative(PROJECT_DIR, file)}`;
}

describe('the documentation', () => {
  const all = pages();

  it('finds the pages and their links', () => {
    expect(all).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'docs/running.md', 'docs/hosts/claude-code.md', 'client/README.md', 'examples/opencode-plugins/README.md']));
    expect(all.flatMap(links).filter((l) => !external(l.target)).length).toBeGreaterThan(50);
  });

  it('every relative link and image resolves to a file, and every #anchor to a heading of it', () => {
    const problems = all.flatMap(links).filter((l) => !external(l.target))
      .map((l) => ({ l, why: broken(l) }))
      .filter((x) => x.why)
      .map(({ l, why }) => `${l.page}:${l.line} (${l.target}): ${why}`);
    expect(problems).toEqual([]);
  });

  it('every page of docs/ can be reached from README.md by its links', () => {
    const reached = new Set<string>();
    const queue = ['README.md'];
    while (queue.length) {
      const page = queue.shift()!;
      if (reached.has(page)) continue;
      reached.add(page);
      for (const l of links(page)) {
        if (external(l.target) || broken(l)) continue;
        const rawPath = l.target.split('#')[0];
        if (!rawPath) continue;
        let target = path.relative(PROJECT_DIR, path.resolve(path.dirname(path.join(PROJECT_DIR, page)), decodeURIComponent(rawPath))).split(path.sep).join('/');
        if (fs.statSync(path.join(PROJECT_DIR, target)).isDirectory()) target = path.posix.join(target, 'README.md');
        if (target.endsWith('.md') && fs.existsSync(path.join(PROJECT_DIR, target))) queue.push(target);
      }
    }
    expect(all.filter((p) => p.startsWith('docs/') && !reached.has(p))).toEqual([]);
  });

  it('the README fits on a few screens, with a picture of the review page and the agents\' table', () => {
    const readme = fs.readFileSync(path.join(PROJECT_DIR, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(150);
    expect(readme).toMatch(/!\[[^\]]+\]\(docs\/screenshots\/[^)]+\.png\)/);
    for (const agent of ['OpenCode', 'Claude Code', 'Codex CLI']) expect(readme).toMatch(new RegExp(`^\\| \\[${agent}\\]\\(docs/hosts/`, 'm'));
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm ci && npm test');
  });

  it('the checker itself: a made-up file and a made-up anchor are reported, GitHub\'s anchors are found', () => {
    expect(broken({ page: 'README.md', target: 'docs/no-such-page.md', line: 1 })).toBe('no such file: docs/no-such-page.md');
    expect(broken({ page: 'README.md', target: 'docs/running.md#no-such-heading', line: 1 })).toBe('no heading #no-such-heading in docs/running.md');
    expect(slug('The typed client (`@agent-history/client`)')).toBe('the-typed-client-agent-historyclient');
    expect(slug('Mutations and errors by `_tag`: a plugin\'s seal')).toBe('mutations-and-errors-by-_tag-a-plugins-seal');
    expect(links('README.md').some((l) => l.target === 'docs/review.md#try-it-on-the-demo')).toBe(true);
  });
});
