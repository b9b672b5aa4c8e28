/**
 * The scratch row the directory writes an execution's fields through (directory.ts `attach`):
 * strings as their interned numbers, a location checked to fit the columns.
 */
/** Locations are kept as 32-bit numbers: a segment's offset past 4 GiB is refused. */
const MAX_U32 = 0xffffffff;

/** An execution's fields as `attach` writes them, strings as their numbers (one scratch row per directory). */
export interface CodedRow {
  org: number;
  proc: number;
  ver: number;
  env: number;
  flow: number;
  state: number;
  /** FLAG_* bits: started by a trigger, a child. */
  flags: number;
  startMs: number;
  active: number;
  correlation: string | null;
  root: string | null;
  parent: string | null;
  dueMs: number | null;
  segment: number;
  offset: number;
  length: number;
}

/** Throws when the row's location does not fit the 32-bit columns. */
export function checkLocation(r: CodedRow): void {
  if (r.offset > MAX_U32 || r.length > MAX_U32 || r.segment > MAX_U32)
    throw new RangeError('a location past 4 GiB cannot be kept');
}
