/*
 * Words, icons and style names for the API's codes: a node instance's `statusCd` and an
 * execution's `state`. Every state is shown with its word and its icon, never by colour alone.
 */
import type { StateName, StatusCd } from '../../shared/api/process.js';

/** A node's state as the diagram and the panels show it (also its CSS class: `state-<name>`). */
export type NodeState = 'active' | 'waiting' | 'completed' | 'failed' | 'cancelled' | 'timedOut';

/** The icon drawn for a state (console/components/state-icon.tsx). */
export type IconName = NodeState | 'running';

/** A node instance's statusCd as a NodeState (STATUS: 0 active ... 5 timed out). */
const BY_STATUS: Record<StatusCd, NodeState> = {
  0: 'active',
  1: 'waiting',
  2: 'completed',
  3: 'failed',
  4: 'cancelled',
  5: 'timedOut',
};

/** The NodeState of a node instance's `statusCd`. Pure. */
export function nodeState(statusCd: StatusCd): NodeState {
  return BY_STATUS[statusCd];
}

/** A NodeState in words, as a person reads it. */
export const NODE_STATE_WORDS: Record<NodeState, string> = {
  active: 'active',
  waiting: 'waiting',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
  timedOut: 'timed out',
};

/** An execution's state: its word and icon (its CSS class is `state-<icon>`). */
export const EXECUTION_STATES: Record<StateName, { readonly word: string; readonly icon: IconName }> = {
  RUNNING: { word: 'running', icon: 'running' },
  COMPLETED: { word: 'completed', icon: 'completed' },
  FAILED: { word: 'failed', icon: 'failed' },
  CANCELLED: { word: 'cancelled', icon: 'cancelled' },
};

/** The execution states, in the order the filters list them. */
export const STATE_NAMES = ['RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const satisfies readonly StateName[];
