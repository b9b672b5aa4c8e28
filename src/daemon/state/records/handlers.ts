/**
 * The shape of a family's part of the reducer (records.ts): one handler per record type of
 * the family, so the compiler reports a record type without one.
 */
import type { WfxState } from '../state.js';

/** One handler per record type of `R`, each applying its record to the state in place. */
export type Handlers<R extends { readonly type: string }> = {
  readonly [T in R['type']]: (state: WfxState, record: Extract<R, { type: T }>) => void;
};
