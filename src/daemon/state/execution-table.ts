/**
 * What an instance table belongs to: the state's `instances` dictionary and the table kept
 * beside it (WfxState.instanceTable). Generic, so that this module needs nothing of state.ts:
 * the state's shape imports the table, not the other way round.
 */
export interface ExecutionTableHolder<T extends { readonly processInstanceId: string }> {
  instances: Record<string, T | undefined>;
  instanceTable?: ExecutionTable<T> | undefined;
}

/** The dictionary without its tombstones, built a few keys at a time (see ExecutionTable.archive). */
interface Rebuild<T> {
  readonly into: Record<string, T | undefined>;
  /** Its keys in order; its counts are taken when it replaces the dictionary. */
  readonly ids: string[];
  /** Where it is in the keys of the dictionary being rebuilt (which it reads up to their end, those added meanwhile included). */
  next: number;
}

/**
 * Keys visited by the rebuild per archived execution: a few microseconds added to an archive,
 * where rebuilding a large dictionary at once would hold the event loop (docs/decisions/).
 */
const REBUILD_KEYS_PER_ARCHIVE = 32;

/** Tombstones tolerated before a rebuild starts, whatever the number of live executions. */
const REBUILD_MIN_TOMBSTONES = 10_000;

/**
 * The live executions of the state (`holder.instances`, by id) and what is kept beside that
 * dictionary: its keys in their order, how many are live and how many are tombstones, and the
 * rebuild without tombstones under way.
 *
 * Invariant: every change to the dictionary goes through `put` and `archive`, so `ids()` is
 * always what Object.keys(holder.instances) would give, without enumerating a large dictionary
 * (a checkpoint's copy and the rebuild walk it instead). A key is only ever added: an archived
 * execution leaves its key with `undefined` (a tombstone), which `live()` skips and JSON leaves
 * out; a later `put` of the same id (never in practice: ids are new) revives it in its place.
 * Once tombstones outnumber the live executions (and REBUILD_MIN_TOMBSTONES), the dictionary is
 * rebuilt without them, a few keys per archive, and the new object replaces `holder.instances`
 * once it has them all: the same value, so the snapshot, JSON and every lookup are as before.
 *
 * Why tombstones: deleting keys from a large dictionary as a resume load drains it kept young
 * executions alive for the scavenger (docs/decisions/). Why an array of ids, not a Set: keys
 * are only ever added, and an array takes less memory and no hashing.
 */
export class ExecutionTable<T extends { readonly processInstanceId: string }> {
  /**
   * The table of `holder`'s dictionary: the one kept beside it, or a new one (listing the
   * dictionary's keys once) when the dictionary was made elsewhere (a snapshot parsed, a
   * literal) or the holder is a copy of the table's own (a spread).
   */
  static of<T extends { readonly processInstanceId: string }>(holder: ExecutionTableHolder<T>): ExecutionTable<T> {
    const table = holder.instanceTable;
    if (table !== undefined && table.holder === holder && table.instances === holder.instances) return table;
    return (holder.instanceTable = new ExecutionTable(holder));
  }

  /** The dictionary indexed: `holder.instances`, until a rebuild replaces both. */
  private instances: Record<string, T | undefined>;
  /** Its keys in their order, live executions and tombstones. */
  private index: string[];
  private liveCount: number;
  private tombstones: number;
  private rebuild: Rebuild<T> | null = null;
  /** A step's draft's table (`forDraft`): it holds only what the step read or wrote, so it lists nothing. */
  private partial = false;

  /**
   * The table of a step's draft (state/draft/): `holder.instances` holds only the executions the
   * step read or wrote (the rest are its base's), so the table puts and archives but lists
   * nothing: a step lists no executions.
   */
  static forDraft<T extends { readonly processInstanceId: string }>(
    holder: ExecutionTableHolder<T>,
  ): ExecutionTable<T> {
    const table = new ExecutionTable(holder);
    table.partial = true;
    return (holder.instanceTable = table);
  }

  private listed(): void {
    if (this.partial) throw new Error("a step's draft lists no executions");
  }

  private constructor(private readonly holder: ExecutionTableHolder<T>) {
    const instances = holder.instances;
    const ids = Object.keys(instances);
    let live = 0;
    for (const id of ids) if (instances[id] !== undefined) live++;
    this.instances = instances;
    this.index = ids;
    this.liveCount = live;
    this.tombstones = ids.length - live;
  }

  /** How many live executions the table holds (tombstones not counted). */
  get size(): number {
    this.listed();
    return this.liveCount;
  }

  /** Ids of the executions in their order, tombstones included (read `holder.instances[id]`); never changed in place by the caller. */
  ids(): readonly string[] {
    this.listed();
    return this.index;
  }

  /** The keys of the dictionary in their order, tombstones included: what Object.keys would give (a copy the caller owns). */
  keys(): string[] {
    this.listed();
    return this.index.slice();
  }

  /** The live executions, tombstones skipped, in their order. */
  live(): T[] {
    this.listed();
    const out: T[] = [];
    const instances = this.instances;
    for (const id of this.index) {
      const inst = instances[id];
      if (inst !== undefined) out.push(inst);
    }
    return out;
  }

  /** Puts execution `inst` under its id: a new one, or in place of the one there (or of its tombstone). */
  put(inst: T): void {
    const instances = this.instances;
    const id = inst.processInstanceId;
    const was = instances[id];
    // A tombstone's key (an archived id back: never, but kept exact), or a new one.
    const known = was !== undefined || Object.hasOwn(instances, id);
    if (was === undefined) {
      if (known) this.tombstones--;
      else this.index.push(id);
      this.liveCount++;
    }
    instances[id] = inst;
    const rebuild = this.rebuild;
    // Where the rebuild has copied it already, or passed it as a tombstone, it takes the change
    // too; a key it has not reached yet it copies as it finds it.
    if (rebuild !== null && known) {
      const copied = Object.hasOwn(rebuild.into, id);
      if (copied || was === undefined) {
        rebuild.into[id] = inst;
        if (!copied) rebuild.ids.push(id);
      }
    }
  }

  /**
   * Removes an archived execution: its key is left with `undefined` rather than deleted (a
   * tombstone). Archiving an id that is not live does nothing. May take a step of the rebuild
   * (see the class's comment), which replaces `holder.instances` once it has every key.
   */
  archive(id: string): void {
    const instances = this.instances;
    if (instances[id] === undefined) return;
    instances[id] = undefined;
    this.liveCount--;
    this.tombstones++;
    if (this.rebuild === null) {
      if (this.tombstones < REBUILD_MIN_TOMBSTONES || this.tombstones < this.liveCount) return;
      this.rebuild = { into: {}, ids: [], next: 0 };
    } else if (Object.hasOwn(this.rebuild.into, id)) {
      this.rebuild.into[id] = undefined; // copied already: a tombstone there too
    }
    this.rebuildStep();
  }

  /** Copies the next live executions into the rebuild; once it has them all, it replaces the dictionary. */
  private rebuildStep(): void {
    const rebuild = this.rebuild!;
    const instances = this.instances;
    const ids = this.index;
    const end = Math.min(ids.length, rebuild.next + REBUILD_KEYS_PER_ARCHIVE);
    for (; rebuild.next < end; rebuild.next++) {
      const id = ids[rebuild.next]!;
      const inst = instances[id];
      // Not copied before (a revived tombstone is, when it comes back): each key once, in order.
      if (inst !== undefined && !Object.hasOwn(rebuild.into, id)) {
        rebuild.into[id] = inst;
        rebuild.ids.push(id);
      }
    }
    if (rebuild.next < ids.length) return;
    this.rebuild = null;
    // It holds each live execution, and a tombstone for each archived since it copied it.
    this.instances = rebuild.into;
    this.index = rebuild.ids;
    this.tombstones = rebuild.ids.length - this.liveCount;
    this.holder.instances = rebuild.into;
  }

  /** Left out of JSON: the table is derived from the dictionary (and refers to its holder). */
  toJSON(): undefined {
    return undefined;
  }
}
