// The one way a host writes into an agent's transcript (Claude Code's JSON-lines transcript, Codex's rollout):
// corrections and retractions, rewritten atomically while no process of the session runs (the host checks).
import fs from 'node:fs';
import path from 'node:path';

/**
 * Rewrites a file atomically: the new content (`rewrite` of the old text, answering how many edits it applied)
 * goes to a temporary file that replaces the original by rename (a crash leaves the old file or the new one,
 * never a torn one). Called only while no agent process of the session runs: a writer that opened the file just
 * before the rename and writes just after it would write into the replaced file, and that line would be lost
 * (measured: 1 line in 400 with a writer appending in a loop). As defence in depth, an append between the read and
 * the rename is detected (the size changed: read again) and one found in the old file after the rename is
 * carried over.
 */
export function rewriteFileAtomically(file: string, rewrite: (text: string) => { text: string; applied: number }): number {
  for (let attempt = 0; attempt < 20; attempt++) {
    const fd = fs.openSync(file, 'r');
    try {
      const before = fs.readFileSync(fd);
      const { text, applied } = rewrite(before.toString('utf8'));
      if (!applied) return 0;
      const tmp = `${file}.gateway-${process.pid}.tmp`;
      const out = fs.openSync(tmp, 'w', fs.fstatSync(fd).mode & 0o777);
      try { fs.writeSync(out, text); fs.fsyncSync(out); } finally { fs.closeSync(out); }
      const now = fs.statSync(file);
      if (now.size !== before.length || now.ino !== fs.fstatSync(fd).ino) { fs.rmSync(tmp, { force: true }); continue; }
      fs.renameSync(tmp, file);
      const late = fs.fstatSync(fd).size - before.length;
      if (late > 0) {
        const buf = Buffer.alloc(late);
        fs.readSync(fd, buf, 0, late, before.length);
        fs.appendFileSync(file, buf);
      }
      try { const d = fs.openSync(path.dirname(file), 'r'); fs.fsyncSync(d); fs.closeSync(d); } catch { /* best effort */ }
      return applied;
    } finally {
      fs.closeSync(fd);
    }
  }
  throw new Error(`${file} kept changing while it was being rewritten`);
}

/** A JSON-lines file read defensively: each line that parses to an object, in order; the others counted. */
export function readJsonLines<T = Record<string, unknown>>(text: string): { lines: T[]; skipped: number } {
  const lines: T[] = [];
  let skipped = 0;
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    try {
      const v = JSON.parse(raw);
      if (v && typeof v === 'object' && !Array.isArray(v)) lines.push(v as T); else skipped++;
    } catch { skipped++; }
  }
  return { lines, skipped };
}
