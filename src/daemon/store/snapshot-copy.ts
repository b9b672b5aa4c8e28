/**
 * A snapshot of the state as it was at one instant, serialized a slice at a time while commits
 * go on, instead of in one JSON.stringify that blocks the event loop for as long as the state is
 * big (about 80 ms with 30,000 waiting executions, every checkpoint).
 *
 * Everything but one large collection (an object of entries: the executions) is serialized at
 * once, when the copy is made. The collection's entries are serialized later, in slices, in
 * their order at that instant. An entry a record is about to change or remove is serialized just
 * before (`touch`, copy on write), so each entry is copied as it was at the instant, and the
 * text is exactly what JSON.stringify would have given then. Entries created after the instant
 * are not in the snapshot: the journal after its seq holds them.
 */
export class SnapshotCopy {
  private readonly collection: Record<string, unknown>;
  private readonly keys: string[];
  /** Position in `keys` of each entry not copied yet. */
  private readonly uncopied: Map<string, number>;
  /** Each entry's `"key":value` text, by position (undefined: not copied yet). */
  private readonly parts: Array<string | undefined>;
  private cursor = 0;
  /** Entries before this position were given out by drain(). */
  private drained = 0;
  private anyEntry = false;
  private headDrained = false;
  private tailDrained = false;
  private readonly head: string;
  private readonly tail: string;

  /**
   * A copy of `state`, to be written as `{...meta, state}`; `key` names its large collection.
   * Throws when `state[key]` is not an object of entries.
   */
  constructor(meta: Record<string, unknown>, state: object, key: string) {
    const collection = (state as Record<string, unknown>)[key];
    if (typeof collection !== 'object' || collection === null || Array.isArray(collection)) {
      throw new TypeError(`the snapshot's large collection "${key}" is not an object of entries`);
    }
    this.collection = collection as Record<string, unknown>;
    this.keys = Object.keys(this.collection);
    this.uncopied = new Map();
    for (let i = 0; i < this.keys.length; i++) this.uncopied.set(this.keys[i]!, i);
    this.parts = new Array<string | undefined>(this.keys.length);
    // The rest of the state now, in its own key order, as JSON.stringify would lay it out.
    const before: string[] = [];
    const after: string[] = [];
    let seen = false;
    for (const [k, value] of Object.entries(state)) {
      if (k === key) {
        seen = true;
        continue;
      }
      const json = JSON.stringify(value);
      if (json !== undefined) (seen ? after : before).push(`${JSON.stringify(k)}:${json}`);
    }
    const metaJson = JSON.stringify(meta);
    const open = `${metaJson.slice(0, -1)}${metaJson.length > 2 ? ',' : ''}"state":{`;
    this.head = `${open}${before.map((p) => `${p},`).join('')}${JSON.stringify(key)}:{`;
    this.tail = `}${after.map((p) => `,${p}`).join('')}}}`;
  }

  /** Copies entry `k` now, if it is one still to copy: call it before a record changes or removes it. */
  readonly touch = (k: string): void => {
    const at = this.uncopied.get(k);
    if (at === undefined) return;
    this.uncopied.delete(k);
    this.parts[at] = this.entryJson(k);
  };

  /**
   * Copies entries in order until `maxEntries` are copied or `budgetMs` has passed; true once
   * every entry is copied.
   */
  step(budgetMs: number, maxEntries = Infinity): boolean {
    const until = performance.now() + budgetMs;
    let n = 0;
    while (this.cursor < this.keys.length) {
      const at = this.cursor++;
      const k = this.keys[at]!;
      if (!this.uncopied.delete(k)) continue; // copied already, by touch()
      this.parts[at] = this.entryJson(k);
      if (++n >= maxEntries || ((n & 63) === 0 && performance.now() >= until)) break;
    }
    return this.cursor >= this.keys.length;
  }

  /**
   * The snapshot's text copied since the last call, in order, to append to the file: the head
   * first, then the entries up to where the copy has reached, and the tail once it is complete.
   * What it returns is dropped from the copy, so a big state is never held twice.
   */
  drain(): string {
    const out: string[] = [];
    if (!this.headDrained) {
      out.push(this.head);
      this.headDrained = true;
    }
    for (; this.drained < this.cursor; this.drained++) {
      const part = this.parts[this.drained]!;
      this.parts[this.drained] = undefined;
      if (part === '') continue;
      out.push(this.anyEntry ? `,${part}` : part);
      this.anyEntry = true;
    }
    if (this.cursor >= this.keys.length && !this.tailDrained) {
      out.push(this.tail);
      this.tailDrained = true;
    }
    return out.join('');
  }

  private entryJson(k: string): string {
    // An entry whose value JSON cannot hold (undefined, a function) is left out, as JSON.stringify does.
    const json = JSON.stringify(this.collection[k]) as string | undefined;
    return json === undefined ? '' : `${JSON.stringify(k)}:${json}`;
  }
}
