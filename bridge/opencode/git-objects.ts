// A read-only Git object database reader (no git binary, no isomorphic-git): loose objects, packs
// (idx v1 and v2, large offsets) with OFS_DELTA and REF_DELTA entries, and `objects/info/alternates`
// followed transitively (relative entries resolved against the objects directory that lists them, as
// git does; at most 5 levels, like git). OpenCode's snapshot git directory of a project with history
// borrows the project's objects through an alternate (`<project>/.git/objects`), and either side may
// have been packed and deltified by `git gc`: every one of those must read.
//
// A failure says exactly what is missing and where it was looked for (`GitObjectError.detail`), so the
// gateway's boundary can say why it is unavailable.
import fs from 'node:fs';
import path from 'node:path';
import { inflateSync } from 'node:zlib';

export type GitObjectType = 'commit' | 'tree' | 'blob' | 'tag';
export interface GitObject { type: GitObjectType; data: Buffer }

export class GitObjectError extends Error {
  constructor(readonly detail: string) { super(detail); }
}

const TYPES: Record<number, GitObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
const OFS_DELTA = 6;
const REF_DELTA = 7;
const MAX_ALTERNATE_DEPTH = 5;
const OID = /^[0-9a-f]{40}$/;

interface Pack {
  idxPath: string;
  packPath: string;
  count: number;
  /** Sorted object names (20 bytes each), their offsets in the pack. */
  names: Buffer;
  offsets: Float64Array;
  fanout: Uint32Array;
  fd: number | null;
  size: number;
  /** Offsets sorted ascending (lazy): an object's compressed data ends where the next one starts. */
  sorted: Float64Array | null;
}

interface ObjectDir { dir: string; packs: Pack[] | null; packNames: string }

/** Base objects of deltas recently resolved, by pack path and offset (delta chains share bases). */
class BaseCache {
  private map = new Map<string, GitObject>();
  private bytes = 0;
  constructor(private readonly maxBytes: number) {}
  get(k: string) {
    const v = this.map.get(k);
    if (v) { this.map.delete(k); this.map.set(k, v); }
    return v;
  }
  set(k: string, v: GitObject) {
    if (v.data.length > this.maxBytes / 4 || this.map.has(k)) return;
    this.map.set(k, v);
    this.bytes += v.data.length;
    while (this.bytes > this.maxBytes) {
      const [first, o] = this.map.entries().next().value!;
      this.map.delete(first);
      this.bytes -= o.data.length;
    }
  }
}

export class GitObjectStore {
  /** The objects directories searched, in order: this repository's, then its alternates. */
  readonly dirs: ObjectDir[] = [];
  /** Problems found while following alternates (a listed directory that does not exist). */
  readonly problems: string[] = [];
  private cache = new BaseCache(32 * 1024 * 1024);

  constructor(readonly gitdir: string) {
    this.scanDirs();
  }

  /** (Re)reads the list of objects directories: this one, then its alternates, transitively. */
  private scanDirs() {
    const objects = path.join(this.gitdir, 'objects');
    if (!fs.existsSync(objects)) throw new GitObjectError(`git directory ${this.gitdir} has no objects directory (removed?)`);
    const old = new Map(this.dirs.map((d) => [d.dir, d]));
    this.dirs.length = 0;
    this.problems.length = 0;
    this.addDir(objects, 0, new Set(), old);
    for (const d of old.values()) if (!this.dirs.includes(d)) for (const p of d.packs ?? []) if (p.fd !== null) { try { fs.closeSync(p.fd); } catch { /* closed */ } }
  }

  private addDir(dir: string, depth: number, seen: Set<string>, old: Map<string, ObjectDir>) {
    const real = (() => { try { return fs.realpathSync(dir); } catch { return path.resolve(dir); } })();
    if (seen.has(real)) return;
    seen.add(real);
    this.dirs.push(old.get(dir) ?? { dir, packs: null, packNames: '' });
    const file = path.join(dir, 'info', 'alternates');
    let text: string;
    try { text = fs.readFileSync(file, 'utf8'); } catch { return; }
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (!line || line.startsWith('#')) continue;
      const alt = path.resolve(dir, line.startsWith('"') ? JSON.parse(line) : line);
      if (depth + 1 > MAX_ALTERNATE_DEPTH) { this.problems.push(`alternate ${alt} (listed in ${file}) is nested deeper than ${MAX_ALTERNATE_DEPTH} levels: not followed`); continue; }
      if (!fs.existsSync(alt)) { this.problems.push(`alternate ${alt} (listed in ${file}) does not exist`); continue; }
      this.addDir(alt, depth + 1, seen, old);
    }
  }

  /** Reads an object; throws GitObjectError naming the object and every place it was looked for. */
  read(oid: string): GitObject {
    if (!OID.test(oid)) {
      throw new GitObjectError(/^[0-9a-f]{64}$/.test(oid) ? `object ${oid}: SHA-256 repositories are not supported` : `${JSON.stringify(oid)} is not an object id`);
    }
    const found = this.find(oid, true);
    if (found) return found;
    const where = this.dirs.map((d) => d.dir);
    throw new GitObjectError(`object ${oid} not found in ${where[0]}` +
      (where.length > 1 ? ` nor in its alternates ${where.slice(1).join(', ')}` : ' (no alternates)') +
      (this.problems.length ? `; ${this.problems.join('; ')}` : ''));
  }

  /** Whether the object exists (loose or packed), anywhere. */
  has(oid: string): boolean {
    return this.find(oid, false) !== null;
  }

  private find(oid: string, load: boolean): GitObject | null {
    for (let pass = 0; pass < 2; pass++) {
      // Second pass: a `git gc` (OpenCode's hourly one, or the user's) may have packed and pruned loose
      // objects since the pack lists were read, and the alternates may have changed: read them again.
      if (pass === 1) this.scanDirs();
      // Packs first (a binary search in memory), then loose objects (a file open each): objects are
      // immutable, so where one is found does not matter, and after a gc most are packed.
      for (const d of this.dirs) {
        for (const p of this.packsOf(d, pass === 1)) {
          const off = lookup(p, oid);
          if (off !== null) return load ? this.readPacked(p, off) : { type: 'blob', data: Buffer.alloc(0) };
        }
      }
      for (const d of this.dirs) {
        const loose = path.join(d.dir, oid.slice(0, 2), oid.slice(2));
        let raw: Buffer | null = null;
        try { raw = fs.readFileSync(loose); } catch { /* not loose here */ }
        if (raw) return load ? parseLoose(oid, loose, raw) : { type: 'blob', data: Buffer.alloc(0) };
      }
    }
    return null;
  }

  private packsOf(d: ObjectDir, rescan: boolean): Pack[] {
    if (d.packs && !rescan) return d.packs;
    const pdir = path.join(d.dir, 'pack');
    let names: string[] = [];
    try { names = fs.readdirSync(pdir).filter((n) => n.endsWith('.idx')).sort(); } catch { /* no packs */ }
    const key = names.join('\n');
    if (d.packs && key === d.packNames) return d.packs;
    const old = new Map((d.packs ?? []).map((p) => [p.idxPath, p]));
    const packs: Pack[] = [];
    for (const n of names) {
      const idxPath = path.join(pdir, n);
      const prev = old.get(idxPath);
      if (prev) { packs.push(prev); old.delete(idxPath); continue; }
      const packPath = idxPath.slice(0, -4) + '.pack';
      if (!fs.existsSync(packPath)) continue; // being written, or a stale idx
      packs.push(readIdx(idxPath, packPath));
    }
    for (const p of old.values()) if (p.fd !== null) { try { fs.closeSync(p.fd); } catch { /* closed */ } }
    d.packs = packs;
    d.packNames = key;
    return packs;
  }

  private readPacked(p: Pack, offset: number, depth = 0): GitObject {
    const key = `${p.packPath}:${offset}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    if (depth > 10_000) throw new GitObjectError(`pack ${p.packPath}: delta chain too deep at offset ${offset}`);
    if (p.fd === null) p.fd = fs.openSync(p.packPath, 'r');
    // One read: the entry runs from its offset to the next entry's (its header, then zlib data).
    const end = nextOffset(p, offset);
    const head = Buffer.allocUnsafe(Math.max(0, end - offset));
    if (fs.readSync(p.fd, head, 0, head.length, offset) !== head.length) throw new GitObjectError(`pack ${p.packPath}: truncated at offset ${offset}`);
    let i = 0;
    let c = head[i++];
    const type = (c >> 4) & 7;
    let size = c & 15;
    let shift = 4;
    while (c & 0x80) { c = head[i++]; size += (c & 0x7f) * 2 ** shift; shift += 7; }
    let baseOffset = -1;
    let baseOid: string | null = null;
    if (type === OFS_DELTA) {
      c = head[i++];
      let rel = c & 0x7f;
      while (c & 0x80) { c = head[i++]; rel = (rel + 1) * 128 + (c & 0x7f); }
      baseOffset = offset - rel;
    } else if (type === REF_DELTA) {
      baseOid = head.subarray(i, i + 20).toString('hex');
      i += 20;
    } else if (!TYPES[type]) {
      throw new GitObjectError(`pack ${p.packPath}: unknown object type ${type} at offset ${offset}`);
    }
    const compressed = head.subarray(i);
    let data: Buffer;
    try { data = inflateSync(compressed); } catch (e: any) {
      throw new GitObjectError(`pack ${p.packPath}: object at offset ${offset} does not inflate (${e?.message ?? e})`);
    }
    if (data.length !== size) throw new GitObjectError(`pack ${p.packPath}: object at offset ${offset} has ${data.length} bytes, header says ${size}`);
    let obj: GitObject;
    if (type === OFS_DELTA || type === REF_DELTA) {
      let base: GitObject;
      if (baseOid) {
        const off = lookup(p, baseOid);
        base = off !== null ? this.readPacked(p, off, depth + 1) : this.read(baseOid);
      } else base = this.readPacked(p, baseOffset, depth + 1);
      obj = { type: base.type, data: applyDelta(base.data, data, p.packPath, offset) };
    } else obj = { type: TYPES[type], data };
    this.cache.set(key, obj);
    return obj;
  }

  close(): void {
    for (const d of this.dirs) for (const p of d.packs ?? []) if (p.fd !== null) { try { fs.closeSync(p.fd); } catch { /* closed */ } p.fd = null; }
  }
}

function parseLoose(oid: string, file: string, raw: Buffer): GitObject {
  let buf: Buffer;
  try { buf = inflateSync(raw); } catch (e: any) { throw new GitObjectError(`loose object ${file} does not inflate (${e?.message ?? e})`); }
  const nul = buf.indexOf(0);
  const [type, size] = buf.subarray(0, nul).toString('latin1').split(' ');
  const data = buf.subarray(nul + 1);
  if (!['commit', 'tree', 'blob', 'tag'].includes(type) || Number(size) !== data.length) {
    throw new GitObjectError(`loose object ${oid} (${file}) has a bad header`);
  }
  return { type: type as GitObjectType, data };
}

function readIdx(idxPath: string, packPath: string): Pack {
  const b = fs.readFileSync(idxPath);
  const size = fs.statSync(packPath).size;
  const v2 = b.readUInt32BE(0) === 0xff744f63;
  if (v2 && b.readUInt32BE(4) !== 2) throw new GitObjectError(`pack index ${idxPath}: version ${b.readUInt32BE(4)} is not supported`);
  const fanStart = v2 ? 8 : 0;
  const fanout = new Uint32Array(256);
  for (let i = 0; i < 256; i++) fanout[i] = b.readUInt32BE(fanStart + i * 4);
  const count = fanout[255];
  const names = Buffer.alloc(count * 20);
  const offsets = new Float64Array(count);
  if (v2) {
    const namesAt = 8 + 1024;
    b.copy(names, 0, namesAt, namesAt + count * 20);
    const offAt = namesAt + count * 20 + count * 4;
    const largeAt = offAt + count * 4;
    for (let i = 0; i < count; i++) {
      const o = b.readUInt32BE(offAt + i * 4);
      offsets[i] = o & 0x80000000 ? Number(b.readBigUInt64BE(largeAt + (o & 0x7fffffff) * 8)) : o;
    }
  } else {
    for (let i = 0; i < count; i++) {
      const at = 1024 + i * 24;
      offsets[i] = b.readUInt32BE(at);
      b.copy(names, i * 20, at + 4, at + 24);
    }
  }
  return { idxPath, packPath, count, names, offsets, fanout, fd: null, size, sorted: null };
}

function lookup(p: Pack, oid: string): number | null {
  const want = Buffer.from(oid, 'hex');
  const first = want[0];
  let lo = first === 0 ? 0 : p.fanout[first - 1];
  let hi = p.fanout[first];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = p.names.compare(want, 0, 20, mid * 20, mid * 20 + 20);
    if (c === 0) return p.offsets[mid];
    if (c > 0) hi = mid; else lo = mid + 1;
  }
  return null;
}

function nextOffset(p: Pack, offset: number): number {
  if (!p.sorted) p.sorted = Float64Array.from(p.offsets).sort();
  const s = p.sorted;
  let lo = 0;
  let hi = s.length;
  while (lo < hi) { const mid = (lo + hi) >>> 1; if (s[mid] <= offset) lo = mid + 1; else hi = mid; }
  return lo < s.length ? s[lo] : p.size - 20; // the last object ends at the pack's trailing checksum
}

function applyDelta(base: Buffer, delta: Buffer, pack: string, offset: number): Buffer {
  let i = 0;
  const varint = () => { let v = 0; let shift = 0; let c; do { c = delta[i++]; v += (c & 0x7f) * 2 ** shift; shift += 7; } while (c & 0x80); return v; };
  const baseSize = varint();
  const resultSize = varint();
  if (baseSize !== base.length) throw new GitObjectError(`pack ${pack}: delta at offset ${offset} expects a base of ${baseSize} bytes, found ${base.length}`);
  const out = Buffer.allocUnsafe(resultSize);
  let o = 0;
  while (i < delta.length) {
    const op = delta[i++];
    if (op & 0x80) {
      let off = 0;
      let n = 0;
      if (op & 0x01) off |= delta[i++];
      if (op & 0x02) off |= delta[i++] << 8;
      if (op & 0x04) off |= delta[i++] << 16;
      if (op & 0x08) off = (off | (delta[i++] << 24)) >>> 0;
      if (op & 0x10) n |= delta[i++];
      if (op & 0x20) n |= delta[i++] << 8;
      if (op & 0x40) n |= delta[i++] << 16;
      if (n === 0) n = 0x10000;
      if (off + n > base.length || o + n > resultSize) throw new GitObjectError(`pack ${pack}: delta at offset ${offset} copies outside its base`);
      base.copy(out, o, off, off + n);
      o += n;
    } else if (op) {
      if (o + op > resultSize || i + op > delta.length) throw new GitObjectError(`pack ${pack}: delta at offset ${offset} inserts past its end`);
      delta.copy(out, o, i, i + op);
      i += op;
      o += op;
    } else throw new GitObjectError(`pack ${pack}: delta at offset ${offset} has a reserved opcode`);
  }
  if (o !== resultSize) throw new GitObjectError(`pack ${pack}: delta at offset ${offset} produced ${o} bytes, expected ${resultSize}`);
  return out;
}

export interface TreeEntry { mode: number; name: string; oid: string }

/** Parses a tree object's entries. */
export function parseTree(data: Buffer): TreeEntry[] {
  const out: TreeEntry[] = [];
  let i = 0;
  while (i < data.length) {
    const sp = data.indexOf(0x20, i);
    const nul = data.indexOf(0, sp);
    if (sp < 0 || nul < 0 || nul + 21 > data.length) throw new GitObjectError('malformed tree object');
    out.push({ mode: parseInt(data.toString('latin1', i, sp), 8), name: data.toString('utf8', sp + 1, nul), oid: data.toString('hex', nul + 1, nul + 21) });
    i = nul + 21;
  }
  return out;
}
