import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project's folder: the nearest one above this file with the gateway's package.json (the same
 * from the sources, `server/`, and from the build, `dist/server/`).
 */
export const PROJECT_DIR = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const p = path.join(dir, 'package.json');
    if (existsSync(p) && JSON.parse(readFileSync(p, 'utf8')).name === 'agent-history-gateway') return dir;
    const up = path.dirname(dir);
    if (up === dir) return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
    dir = up;
  }
})();

/** The gateway's version (package.json): `gateway --version`, `/health`. */
export const VERSION: string = JSON.parse(readFileSync(path.join(PROJECT_DIR, 'package.json'), 'utf8')).version;
