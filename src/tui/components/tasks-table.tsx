import { Box, Text } from 'ink';
import { clock, countdown, cut, duration, envWord, fit, idColumns, shortId, windowStart } from '../format.js';
import type { Task } from '../hooks/use-tasks.js';

type Props = {
  /** The waiting tasks, oldest first; null while the first read is under way. */
  readonly items: readonly Task[] | null;
  readonly selected: number;
  readonly now: Date;
  /** Rows for the task lines (the table scrolls to keep the selection in view). */
  readonly rows: number;
  /** Terminal columns: the columns are budgeted to fit (taskColumns); the id keeps its head (shortId). */
  readonly width: number;
};

/** What the columns of a task list must fit (taskColumns). */
export interface TaskLayoutNeeds {
  /** Some task is an agent's tool call. */
  readonly agents?: boolean;
  /** Some task has a dueAt (a timeout or a timer boundary event). */
  readonly due?: boolean;
  /** The tasks run in more than one environment. */
  readonly environments?: number;
  /** The longest flow label (`name vN`) and node name listed. */
  readonly longestFlow?: number;
  readonly longestNode?: number;
  /** The id's columns when room is short (idColumns of the listed ids: enough to tell them apart). */
  readonly narrowId?: number;
}

/** Width of a countdown cell: `overdue 59m 59s` is cut, `in 59m 59s` fits. */
const DUE = 12;
/** The id's least width when room is short: its head in 12 columns (shortId), more if ids share it. */
const ID_MIN = 12;

/**
 * Widths of the task list's columns for `width` terminal columns (pure; 0: not shown). The flow
 * name and the node name come first (as wide as the longest listed, flow 18 to 40, node 14 to
 * 30, the node giving way first when short), the id's head next in `narrowId` columns (at least
 * 12, enough to tell the listed ids apart, so it can be typed to wfx), then: DUE (a countdown)
 * from 100 columns when some task has one; AGENT from 100 columns when some task is a tool call;
 * ENV always when the tasks run in more than one environment (`PROD`/`DEV`), else when 5 columns
 * are left, whole (`DEVELOPMENT`) when 12 are; the id is whole (36) when what is left allows.
 */
export function taskColumns(
  width: number,
  needs: TaskLayoutNeeds = {},
): { flow: number; node: number; due: number; env: number; agent: number; id: number } {
  const due = needs.due && width >= 100 ? DUE : 0;
  const agent = needs.agents && width >= 100 ? 20 : 0;
  // marker 2, input 9 + 1, waiting since 16 + 1; the last column keeps off the terminal's edge.
  const narrow = Math.max(ID_MIN, needs.narrowId ?? ID_MIN);
  let room = width - 1 - 29 - (due && due + 1) - (agent && agent + 1) - narrow;
  let env = (needs.environments ?? 1) > 1 ? 4 : 0;
  room -= env && env + 1;
  let flow = Math.min(40, Math.max(18, needs.longestFlow ?? 0));
  let node = Math.min(30, Math.max(14, needs.longestNode ?? 0));
  const over = flow + 1 + node + 1 - room;
  if (over > 0) {
    const fromNode = Math.min(over, node - 10);
    node -= fromNode;
    flow = Math.max(10, flow - (over - fromNode));
  }
  let left = room - (flow + 1 + node + 1);
  if (env === 0 && left >= 5) [env, left] = [4, left - 5];
  if (env === 4 && left >= 7) [env, left] = [11, left - 7];
  return { flow, node, due, env, agent, id: left >= 36 - narrow ? 36 : narrow };
}

/** The flow column of a task: its name and version. */
const flowLabel = (task: Task) => `${task.processName} v${task.processVersion}`;

/**
 * The waiting tasks: flow, node, input type, waiting since (and for how long), the time left to
 * its timer (when some task has one), its environment (when there is room, or more than one is
 * listed), the agent asking (when some task is a tool call), execution id; the selected one's
 * title below, its agent and its countdown.
 */
export function TasksTable({ items, selected, now, rows, width }: Props) {
  if (items === null) return <Text dimColor> reading the waiting tasks…</Text>;
  const first = windowStart(selected, rows, items.length);
  const visible = items.slice(first, first + rows);
  const cols = taskColumns(width, {
    agents: items.some((i) => i.agent),
    due: items.some((i) => i.dueAt),
    environments: new Set(items.map((i) => i.environment)).size,
    longestFlow: Math.max(0, ...visible.map((i) => flowLabel(i).length)),
    longestNode: Math.max(0, ...visible.map((i) => i.nodeName.length)),
    narrowId: idColumns(
      visible.map((i) => i.processInstanceId),
      ID_MIN,
    ),
  });
  const cell = (text: string, w: number) => (w ? `${fit(text, w)} ` : '');
  const current = items[selected];
  return (
    <Box flexDirection="column">
      <Text bold>
        {`  ${fit('FLOW', cols.flow)} ${fit('NODE', cols.node)} ${fit('INPUT', 9)} ${fit('WAITING SINCE', 16)} `}
        {`${cell('DUE', cols.due)}${cell('ENV', cols.env)}${cell('AGENT', cols.agent)}ID`}
      </Text>
      {items.length === 0 && <Text dimColor> no task waits for an answer</Text>}
      {visible.map((task, i) => {
        const at = first + i === selected;
        return (
          <Text key={`${task.processInstanceId}|${task.nodeInstanceId}`} inverse={at}>
            {at ? '›' : ' '} {fit(flowLabel(task), cols.flow)} {fit(task.nodeName, cols.node)} {fit(task.inputType, 9)}{' '}
            {fit(`${clock(task.waitingSince)} ${duration(task.waitingSince, null, now)}`, 16)}{' '}
            {cell(task.dueAt ? countdown(task.dueAt, now) : '', cols.due)}
            {cell(envWord(task.environment, cols.env), cols.env)}
            {cell(task.agent ? `${task.agent.nodeName} (${task.agent.tool})` : '', cols.agent)}
            {shortId(task.processInstanceId, cols.id)}
          </Text>
        );
      })}
      {current && (
        <Text dimColor>
          {'  '}
          {cut(
            `${current.nodeType === 'userTask' ? 'user task' : 'input'}: ${current.formTitle ?? current.nodeName}${current.assignee ? ` · for ${current.assignee}` : ''}${current.claim ? ` · claimed by ${current.claim.name}` : ''}${current.agent ? ` · agent ${current.agent.nodeName} (${current.agent.tool})` : ''}${current.dueAt && !cols.due ? ` · due ${countdown(current.dueAt, now)}` : ''}`,
            Math.max(10, width - 2),
          )}
        </Text>
      )}
    </Box>
  );
}
