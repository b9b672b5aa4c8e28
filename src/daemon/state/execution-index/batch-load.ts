/**
 * What a batch load of the execution index reads: a segment index's columns as they are parsed
 * (at-rest/segments/index-codec.ts IndexDoc has this shape), read by position, so that no
 * summary object is made per entry. Strings that repeat are numbers into `strings`; times are
 * ms after `timeBase`; waits are flattened (entry i has `waits[i]` of them, in order).
 */
import type { Interner } from './columns.js';
import { KINDS, MESSAGE } from './wait-kinds.js';

/** A segment index's columns, entry i at position i of each (see IndexDoc for each column). */
export interface SummaryColumns {
  readonly timeBase: number;
  readonly strings: readonly string[];
  readonly ids: readonly string[];
  readonly offset: readonly number[];
  readonly length: readonly number[];
  readonly organization: readonly number[];
  readonly processId: readonly number[];
  readonly processVersion: readonly number[];
  readonly environment: readonly number[];
  readonly stateCd: readonly number[];
  readonly root: ReadonlyArray<string | null>;
  readonly parent: ReadonlyArray<string | null>;
  readonly startMs: readonly number[];
  readonly correlationKey: ReadonlyArray<string | null>;
  readonly dueMs: ReadonlyArray<number | null>;
  readonly active: readonly number[];
  readonly waits: readonly number[];
  readonly waitKind: readonly number[];
  readonly waitNode: readonly number[];
  readonly waitTime: ReadonlyArray<number | null>;
  readonly waitLock: ReadonlyArray<number | null>;
  readonly waitName: ReadonlyArray<number | null>;
  readonly waitAction: ReadonlyArray<number | null>;
  /** `true`: the entry's own correlation key. */
  readonly waitKey: ReadonlyArray<string | null | true>;
  /** Per entry, the index's FLAG_* bits; absent (an older index): not triggered, a child when it has a parent. */
  readonly flags?: readonly number[];
  /** Per wait, an event wait's flow node id; absent (an older index): ''. */
  readonly waitFlowNode?: ReadonlyArray<number | null>;
  /** Per wait, a job wait's priority (null: 0); absent (most indexes): every one 0. */
  readonly waitPriority?: ReadonlyArray<number | null>;
  /** Per entry, its search attributes (null: none); absent (most indexes): none has any. */
  readonly search?: ReadonlyArray<Readonly<Record<string, string>> | null>;
  /** Ids that stopped being live executions as of this segment. */
  readonly removed: readonly string[];
}

/** The index's numbers of one index's strings, each interned once, when first read. */
export class SegmentCodes {
  private readonly codes: Int32Array;
  private readonly kinds: Int8Array;

  constructor(
    private readonly texts: readonly string[],
    private readonly strings: Interner,
  ) {
    this.codes = new Int32Array(texts.length).fill(-1);
    this.kinds = new Int8Array(texts.length).fill(-1);
  }

  /** The execution index's number of the segment index's string `n`. */
  code(n: number): number {
    const code = this.codes[n]!;
    return code >= 0 ? code : (this.codes[n] = this.strings.code(this.texts[n]!));
  }

  /** The execution index's number of the segment index's string `n`, or -1 for null. */
  codeOrNone(n: number | null): number {
    return n === null ? -1 : this.code(n);
  }

  /** The wait row kind (KINDS) of a wait of kind string `n`, whose event type is string `action`. */
  kind(n: number, action: number | null): number {
    let kind = this.kinds[n]!;
    if (kind < 0) {
      const text = this.texts[n]!;
      kind = this.kinds[n] = text === 'event' ? MESSAGE : KINDS.indexOf(text as (typeof KINDS)[number]);
      if (kind <= 0) throw new RangeError(`an index has a wait of kind ${text}`);
    }
    return kind === MESSAGE && this.texts[action!] !== 'message' ? MESSAGE + 1 : kind;
  }
}
