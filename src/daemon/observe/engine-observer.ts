import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';

/**
 * Watches the engine's durable steps (the daemon's metrics, observe/metrics.ts): called after
 * each step is durable, before its effects; must be quick and never throw.
 */
export interface EngineObserver {
  /** The records of a durable step, read against `state` as the step left it. */
  durable(state: WfxState, records: readonly WfxRecord[]): void;
  /** A step's records became durable `seconds` after it ran; `records`: how many. */
  committed(seconds: number, records: number): void;
}
