/**
 * What the indexes kept beside a state's executions share (file refs, job queues, live counts,
 * the task index). Each is derived (DERIVED in state.ts), so left out of snapshots and JSON, and
 * each is its state's own only while it holds that state: a state spread into a new object
 * carries the old one's index, which must be neither read nor kept up for the new one.
 */

/** An index derived from state `S`'s executions, made for that one state. */
export abstract class StateIndex<S extends object> {
  protected constructor(readonly state: S) {}

  /** Left out of JSON as it is of snapshots: it is derived (and holds its state). */
  toJSON(): undefined {
    return undefined;
  }
}

/**
 * `index` when it was made for `state`, else null (none, or one a copied state carried over).
 * Pure; allocates nothing, as the reducer asks on every record.
 */
export function ownIndex<S extends object, I extends StateIndex<S>>(index: I | undefined, state: S): I | null {
  return index !== undefined && index.state === state ? index : null;
}
