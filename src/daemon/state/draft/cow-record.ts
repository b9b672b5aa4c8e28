/**
 * A plain object (a dictionary of the state: kept messages, tree counts, bulks, memory...) seen
 * through a copy-on-write overlay: reads fall through to the base, writes and deletes stay in
 * the overlay, so a step's draft (state-draft.ts) changes nothing of the live state until the
 * runner commits it (`commitRecord`). The reducer's handlers write the state's dictionaries as
 * plain objects (`state.messages[id] = m`, `delete ...`); the overlay lets them run unchanged
 * on a draft.
 *
 * What a read hands out may be changed in place by the caller, so a value read from the base is
 * made the overlay's own first: a plain object gets an overlay of its own, an array or a Map a
 * copy. Any other value (a string, a class instance) is handed out as it is.
 */
import { CowMap } from './cow-map.js';

/** Marks a key deleted in the overlay. */
const GONE: unique symbol = Symbol('gone');

/**
 * An overlay's own part, the proxy's target: what it changed over `base`, in the order it
 * changed it. The traps read it from the target (no side table to look it up in).
 */
interface Overlay {
  readonly base: Record<string, unknown>;
  readonly own: Map<string, unknown>;
  /** Its plain-object values are replaced, never changed in place: handed out as they are (`cowRecord`). */
  readonly shallow: boolean;
}

/** Asked of an overlay, it answers with its Overlay (an object is one when it answers). */
const OVERLAY: unique symbol = Symbol('overlay');

/** The Overlay of `v` if it is an overlay made here, else undefined. */
function overlayOf(v: unknown): Overlay | undefined {
  return typeof v === 'object' && v !== null ? ((v as { [OVERLAY]?: Overlay })[OVERLAY] ?? undefined) : undefined;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/** What a read hands out for `v`, read from a base: changeable by the caller without changing the base. */
function ownable(v: unknown, shallow: boolean): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.slice();
  if (v instanceof Map) return new Map(v as Map<unknown, unknown>);
  if (v instanceof Set) return new Set(v as Set<unknown>);
  return !shallow && isPlainObject(v) ? cowRecord(v) : v;
}

const handler: ProxyHandler<Overlay> = {
  get(o, key) {
    if (key === OVERLAY) return o;
    if (typeof key === 'symbol') return Reflect.get(o.base, key);
    if (o.own.has(key)) {
      const v = o.own.get(key);
      return v === GONE ? undefined : v;
    }
    if (!Object.hasOwn(o.base, key)) return Reflect.get(o.base, key); // Object.prototype's, or nothing
    const v = o.base[key];
    const w = ownable(v, o.shallow);
    if (w !== v) o.own.set(key, w);
    return w;
  },
  set(o, key, value) {
    if (typeof key === 'symbol') return false;
    o.own.set(key, value);
    return true;
  },
  deleteProperty(o, key) {
    if (typeof key === 'symbol') return false;
    if (Object.hasOwn(o.base, key)) o.own.set(key, GONE);
    else o.own.delete(key);
    return true;
  },
  has(o, key) {
    if (typeof key === 'string' && o.own.has(key)) return o.own.get(key) !== GONE;
    return Reflect.has(o.base, key);
  },
  ownKeys(o) {
    const keys: string[] = [];
    for (const key of Object.keys(o.base)) if (o.own.get(key) !== GONE) keys.push(key);
    for (const [key, v] of o.own) if (v !== GONE && !Object.hasOwn(o.base, key)) keys.push(key);
    return keys;
  },
  getOwnPropertyDescriptor(o, key) {
    if (typeof key === 'symbol') return undefined;
    if (o.own.has(key) ? o.own.get(key) === GONE : !Object.hasOwn(o.base, key)) return undefined;
    return { value: handler.get!(o, key, o) as unknown, writable: true, enumerable: true, configurable: true };
  },
  defineProperty(o, key, desc) {
    if (typeof key === 'symbol' || !('value' in desc)) return false;
    o.own.set(key, desc.value);
    return true;
  },
};

/**
 * An overlay over plain object `base` (see the top of this file). `base` is never changed
 * through it. `shallow`: a dictionary whose values the reducer replaces and never changes in
 * place (kept messages, tree counts...): its plain-object values are handed out as they are,
 * not each behind an overlay of its own (its arrays and Maps are still copied).
 */
export function cowRecord<T extends object>(base: T, shallow = false): T {
  const overlay: Overlay = { base: base as Record<string, unknown>, own: new Map(), shallow };
  return new Proxy(overlay, handler) as unknown as T;
}

/**
 * Writes overlay `cow`'s changes into its base, in place (the live state's object), nested
 * overlays into their own bases. A value that is an overlay made elsewhere (read in one place,
 * written in another) is written as its base, committed.
 */
export function commitRecord(cow: object): void {
  const o = overlayOf(cow);
  if (o === undefined) throw new Error('not a copy-on-write overlay');
  const base = o.base;
  for (const [key, v] of o.own) {
    if (v === GONE) {
      delete base[key];
      continue;
    }
    const inner = overlayOf(v);
    if (inner !== undefined) {
      commitRecord(v as object);
      if (base[key] !== inner.base) setOwn(base, key, inner.base);
    } else if (v instanceof CowMap) throw new Error('a CowMap in a plain overlay');
    else setOwn(base, key, v);
  }
  o.own.clear();
}

/** `base[key] = v`, an own `__proto__` key kept a key. */
function setOwn(base: Record<string, unknown>, key: string, v: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(base, key, { value: v, enumerable: true, writable: true, configurable: true });
  else base[key] = v;
}
