import { Box, Text } from 'ink';

const KEYS: ReadonlyArray<readonly [string, string]> = [
  ['↑ ↓  k j', 'move; ← → h l: along a choice laid out on one line (tasks)'],
  ['enter', 'open the execution or the flow (its versions); answer the task'],
  ['esc', 'back to the list (from a child: to its parent)'],
  ['s', 'state filter: all, running, waiting, failed, completed, cancelled'],
  ['c  p', 'cancel the execution (asks first); p: pause/resume a schedule'],
  ['r', 'retry a failed execution (asks first); flows: start a run'],
  ['f', 'executions: filter by flow (all, then each flow in the list)'],
  ['/', 'executions: search by id or correlation key (esc clears)'],
  ['a', 'executions: children too, or not; an open one: answer its task'],
  ['v', 'an open execution: its variables whole, indented (esc back)'],
  ['pgup pgdn', 'an open execution: scroll its log (tab) or variables; g G ends'],
  ['y', 'copy the whole id of the execution or task (shown below too)'],
  ['tab', 'tasks: next field (shift+tab back); an execution: nodes ↔ log'],
  ['space', 'tasks: choose an option (a checkbox toggles)'],
  ['ctrl+s', 'tasks: complete the answer; ctrl+x: cancel the task (asks first)'],
  ['1-5', 'screens: executions, tasks, flows, trigger health, failures'],
  [':', 'command: exec, tasks, flows, triggers, failures, open <id>, quit'],
  ['', '  (a unique start does; tab completes, enter runs, esc closes)'],
  ['? q', 'this help (any key closes it); q quits; ctrl+l draws again'],
];

/** The keys, all of them. */
export function Help() {
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text bold>wfx tui · keys</Text>
      {KEYS.map(([k, what], i) => (
        <Text key={i}>
          <Text bold>{k.padEnd(10)}</Text> {what}
        </Text>
      ))}
    </Box>
  );
}
