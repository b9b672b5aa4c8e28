import { Box, Text } from 'ink';
import { clock, cut, duration, fit, shortId, windowStart } from '../format.js';
import type { Task } from '../hooks/use-tasks.js';

type Props = {
  /** The waiting tasks, oldest first; null while the first read is under way. */
  readonly items: readonly Task[] | null;
  readonly selected: number;
  readonly now: Date;
  /** Rows for the task lines (the table scrolls to keep the selection in view). */
  readonly rows: number;
  /** Terminal columns: the execution id is cut to fit, keeping its tail (shortId). */
  readonly width: number;
};

/** The waiting tasks: flow, node, input type, waiting since (and for how long), execution id; the selected one's title below. */
export function TasksTable({ items, selected, now, rows, width }: Props) {
  if (items === null) return <Text dimColor> reading the waiting tasks…</Text>;
  const first = windowStart(selected, rows, items.length);
  const visible = items.slice(first, first + rows);
  const idWidth = Math.max(8, width - 2 - 19 - 15 - 10 - 17 - 1); // a full id from 100 columns on
  const current = items[selected];
  return (
    <Box flexDirection="column">
      <Text bold>{`  ${fit('FLOW', 18)} ${fit('NODE', 14)} ${fit('INPUT', 9)} ${fit('WAITING SINCE', 16)} ID`}</Text>
      {items.length === 0 && <Text dimColor> no task waits for an answer</Text>}
      {visible.map((task, i) => {
        const at = first + i === selected;
        return (
          <Text key={`${task.processInstanceId}|${task.nodeInstanceId}`} inverse={at}>
            {at ? '›' : ' '} {fit(`${task.processName} v${task.processVersion}`, 18)} {fit(task.nodeName, 14)}{' '}
            {fit(task.inputType, 9)} {fit(`${clock(task.waitingSince)} ${duration(task.waitingSince, null, now)}`, 16)}{' '}
            {shortId(task.processInstanceId, idWidth)}
          </Text>
        );
      })}
      {current && (
        <Text dimColor>
          {'  '}
          {cut(
            `${current.nodeType === 'userTask' ? 'user task' : 'input'}: ${current.formTitle ?? current.nodeName}${current.assignee ? ` · for ${current.assignee}` : ''}`,
            Math.max(10, width - 2),
          )}
        </Text>
      )}
    </Box>
  );
}
