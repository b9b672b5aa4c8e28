/**
 * A Map that reads through to another and keeps its own changes apart (copy-on-write): what a
 * step's draft (state-draft.ts) gives the derived indexes built of Maps (live counts, job
 * queues), so that a step reads back what it wrote without changing the live index, and the
 * runner hands the changes over in one pass when the step is durable (`commitCow`).
 */

/** Marks a key the draft deleted from its base (in `own`, whose order is the draft's). */
const GONE: unique symbol = Symbol('gone');

/** What a CowMap does with a value read from its base before the draft may change it in place. */
export type CowValue = 'shared' | 'nested' | 'copy';

/**
 * A Map over `base` (never changed by it): reads see the base with this map's changes over it,
 * in the order a Map changed in place would give. Values read from the base are shared, or
 * (`nested`) a Map value is wrapped in a CowMap of its own, or (`copy`) an array value is
 * copied, so the caller may change what it reads. `commitCow` writes the changes into the base.
 *
 * Order: a key set again keeps its base position; a key deleted and set again goes last, as in
 * a Map. Not a subclass of Map: a step's draft makes several, most of them never written, so
 * each is a small object until its first change.
 */
export class CowMap<K, V> implements Map<K, V> {
  /** The changes, in the order made: a value, or GONE for a base key deleted. Made on the first. */
  private own: Map<K, V | typeof GONE> | null = null;
  /** Base keys whose base position is gone: deleted here, or deleted and set again (then last). Made on the first. */
  private moved: Set<K> | null = null;

  constructor(
    readonly base: ReadonlyMap<K, V>,
    private readonly kind: CowValue = 'shared',
  ) {}

  get(key: K): V | undefined {
    const own = this.own;
    if (own !== null && own.has(key)) {
      const v = own.get(key)!;
      return v === GONE ? undefined : v;
    }
    if (this.moved?.has(key) === true) return undefined;
    const v = this.base.get(key);
    if (v === undefined || this.kind === 'shared') return v;
    const w = this.kind === 'nested' && v instanceof Map ? new CowMap(v, 'nested') : Array.isArray(v) ? v.slice() : v;
    if (w !== v) (this.own ??= new Map()).set(key, w as V); // in place: the base position is kept
    return w as V;
  }

  has(key: K): boolean {
    const own = this.own;
    if (own !== null && own.has(key)) return own.get(key) !== GONE;
    return this.moved?.has(key) !== true && this.base.has(key);
  }

  set(key: K, value: V): this {
    (this.own ??= new Map()).set(key, value);
    return this;
  }

  delete(key: K): boolean {
    if (!this.has(key)) return false;
    const own = (this.own ??= new Map());
    if (this.base.has(key)) {
      (this.moved ??= new Set()).add(key);
      own.delete(key); // set again later, it goes last
      own.set(key, GONE);
    } else own.delete(key);
    return true;
  }

  clear(): void {
    for (const key of this.base.keys()) (this.moved ??= new Set()).add(key);
    this.own = null;
  }

  get size(): number {
    let n = 0;
    for (const _ of this.keys()) n++;
    return n;
  }

  *entries(): MapIterator<[K, V]> {
    const moved = this.moved;
    for (const key of this.base.keys()) {
      if (moved?.has(key) === true) continue;
      yield [key, this.get(key)!];
    }
    if (this.own === null) return;
    for (const [key, v] of this.own) {
      if (v === GONE) continue;
      if (this.base.has(key) && moved?.has(key) !== true) continue; // yielded in its base position
      yield [key, v];
    }
  }

  *keys(): MapIterator<K> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, v] of this.entries()) yield v;
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return 'CowMap';
  }

  forEach(fn: (value: V, key: K, map: Map<K, V>) => void, thisArg?: unknown): void {
    for (const [key, v] of this.entries()) fn.call(thisArg, v, key, this);
  }

  /** Writes this map's changes into its base (a mutable Map, the live index's), nested maps first. */
  commitTo(base: Map<K, V>): void {
    if (this.moved !== null) for (const key of this.moved) base.delete(key);
    if (this.own === null) return;
    for (const [key, v] of this.own) {
      if (v === GONE) continue;
      if (v instanceof CowMap && v.base === base.get(key)) v.commitTo(base.get(key) as Map<unknown, unknown>);
      else base.set(key, v instanceof CowMap ? (v.materialized() as V) : v);
    }
  }

  /** A plain Map of what this one holds (a nested CowMap whose base left the index meanwhile). */
  private materialized(): Map<K, V> {
    const out = new Map<K, V>();
    for (const [key, v] of this.entries()) out.set(key, v instanceof CowMap ? (v.materialized() as V) : v);
    return out;
  }
}

/** Writes `cow`'s changes into the Map it was made over (`cow.base`, which must be mutable). */
export function commitCow<K, V>(cow: CowMap<K, V>): void {
  cow.commitTo(cow.base as Map<K, V>);
}
