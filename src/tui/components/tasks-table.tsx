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
  /** Terminal columns: the execution id is cut to fit, keeping its head (shortId). */
  readonly width: number;
};

/**
 * Widths of the columns that vary: AGENT (0: not shown) and the execution id. AGENT shows when
 * some task is an agent's tool call and there are 100 columns for it; narrower, the line under
 * the table names the selected task's agent. Pure.
 */
export function taskColumns(width: number, agents: boolean): { agent: number; id: number } {
  const fixed = 2 + 19 + 15 + 10 + 17; // marker, flow, node, input, waiting since (each with its space)
  const agent = agents && width >= 100 ? 20 : 0;
  return { agent, id: Math.max(8, width - fixed - (agent && agent + 1) - 1) };
}

/**
 * The waiting tasks: flow, node, input type, waiting since (and for how long), the agent asking
 * (when some task is a tool call), execution id; the selected one's title below, and its agent.
 */
export function TasksTable({ items, selected, now, rows, width }: Props) {
  if (items === null) return <Text dimColor> reading the waiting tasks…</Text>;
  const first = windowStart(selected, rows, items.length);
  const visible = items.slice(first, first + rows);
  const cols = taskColumns(
    width,
    items.some((i) => i.agent),
  );
  const agentCell = (task: Task) =>
    cols.agent ? `${fit(task.agent ? `${task.agent.nodeName} (${task.agent.tool})` : '', cols.agent)} ` : '';
  const current = items[selected];
  return (
    <Box flexDirection="column">
      <Text
        bold
      >{`  ${fit('FLOW', 18)} ${fit('NODE', 14)} ${fit('INPUT', 9)} ${fit('WAITING SINCE', 16)} ${cols.agent ? `${fit('AGENT', cols.agent)} ` : ''}ID`}</Text>
      {items.length === 0 && <Text dimColor> no task waits for an answer</Text>}
      {visible.map((task, i) => {
        const at = first + i === selected;
        return (
          <Text key={`${task.processInstanceId}|${task.nodeInstanceId}`} inverse={at}>
            {at ? '›' : ' '} {fit(`${task.processName} v${task.processVersion}`, 18)} {fit(task.nodeName, 14)}{' '}
            {fit(task.inputType, 9)} {fit(`${clock(task.waitingSince)} ${duration(task.waitingSince, null, now)}`, 16)}{' '}
            {agentCell(task)}
            {shortId(task.processInstanceId, cols.id)}
          </Text>
        );
      })}
      {current && (
        <Text dimColor>
          {'  '}
          {cut(
            `${current.nodeType === 'userTask' ? 'user task' : 'input'}: ${current.formTitle ?? current.nodeName}${current.assignee ? ` · for ${current.assignee}` : ''}${current.agent ? ` · agent ${current.agent.nodeName} (${current.agent.tool})` : ''}`,
            Math.max(10, width - 2),
          )}
        </Text>
      )}
    </Box>
  );
}
