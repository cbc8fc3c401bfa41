import fs from 'node:fs';

/**
 * The processes of this machine whose command line (arguments joined by spaces) contains `marker`, read
 * from /proc; nothing is killed. A zombie has no command line: gone, though its parent has not reaped it.
 */
export function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').includes(marker)) out.push(Number(pid));
    } catch { /* gone */ }
  }
  return out;
}
