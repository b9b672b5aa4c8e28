/**
 * The search attributes of the execution index's executions (shared/flow/search-attributes.ts),
 * and the index a list filtered on them reads (`where=name=value`): each (name, value) to the
 * slots that have it. Sparse: only executions with attributes have an entry, so an index of
 * executions whose flows declare none holds nothing.
 */
import type { ImageIn, ImageOut } from './image.js';

type Attributes = Readonly<Record<string, string>>;

/** (name, value) as one key: a name holds no NUL. */
const pairKey = (name: string, value: string): string => `${name}\0${value}`;

export class SearchIndex {
  private readonly bySlot = new Map<number, Attributes>();
  private readonly byPair = new Map<string, Set<number>>();

  /** Gives `slot` the attributes `search` (none: undefined), replacing what it had. */
  set(slot: number, search: Attributes | undefined): void {
    this.delete(slot);
    if (search === undefined) return;
    this.bySlot.set(slot, search);
    for (const name of Object.keys(search)) {
      const key = pairKey(name, search[name]!);
      let slots = this.byPair.get(key);
      if (slots === undefined) this.byPair.set(key, (slots = new Set()));
      slots.add(slot);
    }
  }

  /** Takes `slot`'s attributes out. */
  delete(slot: number): void {
    const had = this.bySlot.get(slot);
    if (had === undefined) return;
    this.bySlot.delete(slot);
    for (const name of Object.keys(had)) {
      const key = pairKey(name, had[name]!);
      const slots = this.byPair.get(key)!;
      slots.delete(slot);
      if (slots.size === 0) this.byPair.delete(key);
    }
  }

  /** The attributes of `slot`, if it has any. */
  of(slot: number): Attributes | undefined {
    return this.bySlot.get(slot);
  }

  /** The slots that have every pair of `where` (at least one), read from the rarest pair's. */
  slots(where: ReadonlyArray<readonly [string, string]>): number[] {
    let rarest: Set<number> | undefined;
    for (const [name, value] of where) {
      const slots = this.byPair.get(pairKey(name, value));
      if (slots === undefined) return [];
      if (rarest === undefined || slots.size < rarest.size) rarest = slots;
    }
    if (rarest === undefined) return [];
    const out: number[] = [];
    for (const slot of rarest) {
      const search = this.bySlot.get(slot)!;
      if (where.every(([name, value]) => Object.hasOwn(search, name) && search[name] === value)) out.push(slot);
    }
    return out;
  }

  save(out: ImageOut): void {
    out.value([...this.bySlot]);
  }

  /** Takes what `save` wrote; throws RangeError when it does not fit. */
  restore(inp: ImageIn): void {
    const entries = inp.value((v): v is Array<[number, Attributes]> => Array.isArray(v));
    for (const [slot, search] of entries) this.set(slot, search);
  }
}
