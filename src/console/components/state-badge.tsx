/* A state as a badge: its icon and its word, coloured by state. */
import type { StateName } from '../../shared/api/process.js';
import { EXECUTION_STATES, NODE_STATE_WORDS, type NodeState } from '../model/states.js';
import { StateIcon } from './state-icon.js';

/** Props of StateBadge: an execution's state or a node's. */
type Props =
  | {
      /** An execution's state. */
      readonly state: StateName;
      readonly node?: undefined;
    }
  | {
      readonly state?: undefined;
      /** A node's state. */
      readonly node: NodeState;
    };

/** The badge of an execution's or a node's state. */
export function StateBadge(props: Props) {
  const { word, icon } =
    props.node !== undefined ? { word: NODE_STATE_WORDS[props.node], icon: props.node } : EXECUTION_STATES[props.state];
  return (
    <span class={`badge state-${icon}`}>
      <StateIcon icon={icon} />
      <span>{word}</span>
    </span>
  );
}
