/**
 * Payload shapes: one declaration gives an event payload both its TypeScript type (`Infer`) and the
 * runtime check that runs when the event is written and again when it is replayed. Deliberately
 * small: the journal's payloads are flat records of IDs, enums, text, numbers and JSON.
 */
import { isId, type Kind } from '../ids.js';

export class PayloadError extends Error {
  constructor(readonly path: string, message: string) {
    super(`${path}: ${message}`);
  }
}

export interface Shape<T> {
  readonly check: (v: unknown, path: string) => T;
  /** Absent keys are allowed (and read as absent) when the shape is optional. */
  readonly optional?: boolean;
}

export type Infer<S> = S extends Shape<infer T> ? T : never;

const shape = <T>(check: (v: unknown, path: string) => T): Shape<T> => ({ check });

export const str: Shape<string> = shape((v, p) => {
  if (typeof v !== 'string') throw new PayloadError(p, 'expected a string');
  return v;
});

export const int: Shape<number> = shape((v, p) => {
  if (!Number.isSafeInteger(v)) throw new PayloadError(p, 'expected an integer');
  return v as number;
});

export const num: Shape<number> = shape((v, p) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new PayloadError(p, 'expected a number');
  return v;
});

export const bool: Shape<boolean> = shape((v, p) => {
  if (typeof v !== 'boolean') throw new PayloadError(p, 'expected a boolean');
  return v;
});

/** Any JSON value (validated elsewhere by the domain's own limits). */
export const json: Shape<unknown> = shape((v) => v);

/** A JSON object. */
export const record: Shape<Record<string, unknown>> = shape((v, p) => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new PayloadError(p, 'expected an object');
  return v as Record<string, unknown>;
});

/** An ID of this kind (`ses_…`, `exe_…`: domain/ids.ts). */
export const id = (kind: Kind): Shape<string> => shape((v, p) => {
  if (!isId(kind, v)) throw new PayloadError(p, `expected a ${kind} ID`);
  return v;
});

export const oneOf = <const V extends readonly string[]>(...values: V): Shape<V[number]> => shape((v, p) => {
  if (typeof v !== 'string' || !values.includes(v)) throw new PayloadError(p, `expected one of ${values.join(', ')}`);
  return v as V[number];
});

export const nullable = <T>(s: Shape<T>): Shape<T | null> => shape((v, p) => (v === null ? null : s.check(v, p)));

/** May be absent from the payload (older versions, or fields written only when set). */
export const optional = <T>(s: Shape<T>): Shape<T | undefined> & { readonly optional: true } => ({
  check: (v, p) => (v === undefined ? undefined : s.check(v, p)), optional: true,
});

export const array = <T>(s: Shape<T>): Shape<T[]> => shape((v, p) => {
  if (!Array.isArray(v)) throw new PayloadError(p, 'expected a list');
  return v.map((x, i) => s.check(x, `${p}[${i}]`));
});

type Fields = Record<string, Shape<unknown>>;
type Req<F extends Fields> = { [K in keyof F as F[K] extends { optional: true } ? never : K]: Infer<F[K]> };
type Opt<F extends Fields> = { [K in keyof F as F[K] extends { optional: true } ? K : never]?: Infer<F[K]> };
type Flat<T> = { [K in keyof T]: T[K] };
export type ObjectOf<F extends Fields> = Flat<Req<F> & Opt<F>>;

/** A record with exactly these fields (unknown keys are refused: a payload says what it means). */
export function object<F extends Fields>(fields: F): Shape<ObjectOf<F>> {
  return shape((v, p) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new PayloadError(p, 'expected an object');
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!(k in fields)) throw new PayloadError(`${p}.${k}`, 'is not a field of this payload');
    const out: Record<string, unknown> = {};
    for (const [k, s] of Object.entries(fields)) {
      if (!(k in o) && !s.optional) throw new PayloadError(`${p}.${k}`, 'is missing');
      const x = s.check(o[k], `${p}.${k}`);
      if (x !== undefined) out[k] = x;
    }
    return out as ObjectOf<F>;
  });
}
