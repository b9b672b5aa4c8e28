/**
 * The index's parts as an image (decision 076): its typed-array columns as they are, and
 * its few other values as JSON, in the order its classes save and restore them. An open that
 * finds an image of the segments it lists restores the execution index from it (one read per column)
 * instead of loading every index entry by entry. at-rest/segments/directory-image.ts writes and
 * reads the file; this module holds what each part saves.
 */

/** A column an image holds: a typed array, restored as the same type. */
export type ImageColumn = Int32Array | Uint32Array | Uint8Array | Int8Array | Float64Array | Uint16Array;

const TYPES = {
  Int32Array,
  Uint32Array,
  Uint8Array,
  Int8Array,
  Float64Array,
  Uint16Array,
} as const;

/** A column type's name, as the image's header names it. */
export type ColumnType = keyof typeof TYPES;

/** The columns of the types `T` names, in order. */
type ColumnsOf<T extends readonly ColumnType[]> = { [K in keyof T]: InstanceType<(typeof TYPES)[T[K]]> };

/** Collects the parts an image holds, as each class saves them. */
export class ImageOut {
  readonly columns: ImageColumn[] = [];
  readonly values: unknown[] = [];

  /** Saves the first `length` entries of `column` (all of them by default). */
  column(column: ImageColumn, length = column.length): void {
    this.columns.push(length === column.length ? column : column.subarray(0, length));
  }

  /** Saves a value JSON can hold. */
  value(value: unknown): void {
    this.values.push(value);
  }

  /**
   * Saves the columns of a part that grows them together, one length each, and how many of
   * their entries it uses (`ImageIn.parallel` reads them back and checks that they fit).
   */
  parallel(used: number, ...columns: ImageColumn[]): void {
    for (const c of columns) this.column(c);
    this.value(used);
  }

  /** Saves a map of numbers to numbers. */
  numberMap(map: ReadonlyMap<number, number>): void {
    this.values.push([...map].flat());
  }

  /** Saves strings and nulls: their UTF-16 code units as one column, each one's length (-1: null) as another. */
  texts(texts: ReadonlyArray<string | null>): void {
    const lengths = new Int32Array(texts.length);
    let units = 0;
    for (let i = 0; i < texts.length; i++) {
      const t = texts[i];
      lengths[i] = t == null ? -1 : t.length;
      if (t != null) units += t.length;
    }
    const all = new Uint16Array(units);
    let at = 0;
    for (const t of texts) if (t != null) for (let k = 0; k < t.length; k++) all[at++] = t.charCodeAt(k);
    this.column(lengths);
    this.column(all);
  }
}

/** Hands the parts of an image back in the order they were saved; throws when they do not fit. */
export class ImageIn {
  private nextColumn = 0;
  private nextValue = 0;

  constructor(
    private readonly columns: readonly ImageColumn[],
    private readonly values: readonly unknown[],
  ) {}

  /** The next column, which must be of `type`. */
  column<T extends ColumnType>(type: T): InstanceType<(typeof TYPES)[T]> {
    const c = this.columns[this.nextColumn++];
    if (c === undefined || c.constructor !== TYPES[type]) throw new RangeError(`the image has no ${type} here`);
    return c as InstanceType<(typeof TYPES)[T]>;
  }

  /**
   * The columns, of `types`, then the count of used entries, as `ImageOut.parallel` saved them.
   * Throws RangeError (`the image has <what> that does not fit`) unless the columns are one
   * length and the count is within it: a part's own checks come after.
   */
  parallel<T extends readonly ColumnType[]>(what: string, ...types: T): [...ColumnsOf<T>, number] {
    const columns: ImageColumn[] = types.map((type) => this.column(type));
    const used = this.number();
    const length = columns[0]?.length ?? 0;
    if (used > length || columns.some((c) => c.length !== length))
      throw new RangeError(`the image has ${what} that does not fit`);
    return [...columns, used] as unknown as [...ColumnsOf<T>, number];
  }

  /** The next value. */
  value<T>(check: (v: unknown) => v is T): T {
    const v = this.values[this.nextValue++];
    if (!check(v)) throw new RangeError('the image has another value here');
    return v;
  }

  /** The next value, a finite number. */
  number(): number {
    return this.value((v): v is number => typeof v === 'number' && Number.isFinite(v));
  }

  /** The next value, a list of numbers. */
  numbers(): number[] {
    return this.value((v): v is number[] => Array.isArray(v) && v.every((n) => typeof n === 'number'));
  }

  /** Fills `into` (emptied first) with the map `ImageOut.numberMap` saved. */
  numberMap(into: Map<number, number>): void {
    const flat = this.numbers();
    into.clear();
    for (let i = 0; i + 1 < flat.length; i += 2) into.set(flat[i]!, flat[i + 1]!);
  }

  /** The strings and nulls `ImageOut.texts` saved. */
  texts(): Array<string | null> {
    const lengths = this.column('Int32Array');
    const all = this.column('Uint16Array');
    // One decode (code unit for code unit, lone surrogates too), then slices.
    const joined = Buffer.from(all.buffer, all.byteOffset, all.byteLength).toString('utf16le');
    if (joined.length !== all.length) throw new RangeError('the image has texts that do not decode');
    const out = new Array<string | null>(lengths.length);
    let at = 0;
    for (let i = 0; i < lengths.length; i++) {
      const n = lengths[i]!;
      out[i] = n < 0 ? null : joined.slice(at, (at += n));
    }
    if (at !== all.length) throw new RangeError('the image has texts of other lengths');
    return out;
  }

  /** Whether every part was handed back. */
  get done(): boolean {
    return this.nextColumn === this.columns.length && this.nextValue === this.values.length;
  }
}

/** A column of type `type` and `length` entries, empty (to read into). */
export function emptyColumn(type: string, length: number): ImageColumn {
  if (!Object.hasOwn(TYPES, type)) throw new RangeError(`an image column of type ${type}`);
  return new TYPES[type as ColumnType](length);
}

/** Bytes per element of a column of type `type` (NaN for no such type: no size matches). */
export function bytesPerElement(type: string): number {
  return Object.hasOwn(TYPES, type) ? TYPES[type as ColumnType].BYTES_PER_ELEMENT : NaN;
}

/** The type name of `column`. */
export function columnType(column: ImageColumn): ColumnType {
  return column.constructor.name as ColumnType;
}
