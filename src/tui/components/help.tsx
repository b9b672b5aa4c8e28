import { Box, Text } from 'ink';

const KEYS: ReadonlyArray<readonly [string, string]> = [
  ['↑ ↓  k j', 'move'],
  ['enter', 'open the execution or the flow (its versions); answer the task'],
  ['esc', 'back to the list (from a child: to its parent)'],
  ['s', 'filter by state: all, running, failed, completed, cancelled'],
  ['c', 'cancel the execution (asks first)'],
  ['r', 'retry a failed execution where it failed (asks first)'],
  ['f', 'executions: filter by flow (all, then each flow in the list)'],
  ['/', 'executions: search by id or correlation key (esc clears)'],
  ['a', 'executions: children too, or not; an open one: answer its task'],
  ['v', 'an open execution: its variables whole, indented (esc back)'],
  ['pgup pgdn', 'an open execution: scroll its log (tab) or variables; g G ends'],
  ['r', 'flows: start a run (data as JSON; tab environment, ↑↓ version)'],
  ['tab', 'tasks: next field (shift+tab back); an execution: nodes ↔ log'],
  ['space', 'tasks: choose an option (a checkbox toggles)'],
  ['ctrl+s', 'tasks: complete the answer (enter, in a one-line one)'],
  ['ctrl+x', 'tasks: cancel the task (asks first)'],
  ['1-5', 'screens: executions, tasks, flows, trigger health, failures'],
  ['?', 'this help (any key closes it)'],
  ['q', 'quit'],
  ['ctrl+l', 'clear the terminal and draw again'],
];

/** The keys, all of them. */
export function Help() {
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text bold>wfx tui · keys</Text>
      {KEYS.map(([k, what]) => (
        <Text key={k}>
          <Text bold>{k.padEnd(10)}</Text> {what}
        </Text>
      ))}
    </Box>
  );
}
