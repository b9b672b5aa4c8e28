import { Text, useInput } from 'ink';
import { useEffect, useRef, useState } from 'react';
import type { WfxClient } from '../../client/client.js';
import { ExecutionView, listedChildren } from '../components/execution-view.js';
import { prettyLines, VariablesView } from '../components/variables-view.js';
import { cursorAt, moveCursor } from '../cursor.js';
import { useChildren } from '../hooks/use-children.js';
import { useExecution } from '../hooks/use-execution.js';
import type { Task } from '../hooks/use-tasks.js';
import { scrollTo } from '../scroll.js';
import type { Execution } from '../types.js';

/** Which part of an open execution has the keys: its nodes (children), its log, or its variables opened whole. */
export type DetailFocus = 'nodes' | 'log' | 'variables';

/**
 * The task an execution waits on (its first input node or user task waiting), as GET
 * /process/tasks would list it, built from the execution (pure); null when it waits on none.
 * `dueAt` is the node's own timeout (the tasks list adds timer boundary events).
 */
export function waitingTask(e: Execution): Task | null {
  const n = e.nodes.find((n) => n.statusCd === 1 && n.wait?.kind === 'input');
  if (!n || n.wait?.kind !== 'input') return null;
  const w = n.wait;
  return {
    processInstanceId: e.processInstanceId,
    processId: e.processId,
    processName: e.processName,
    processVersion: e.processVersion,
    organization: e.organization,
    environment: e.environment,
    correlationKey: e.correlationKey,
    nodeInstanceId: n.nodeInstanceId,
    nodeId: n.nodeId,
    nodeName: n.nodeName,
    nodeType: n.nodeType === 'userTask' ? 'userTask' : 'inputNode',
    inputType: w.inputType,
    formTitle: w.formTitle,
    options: w.options,
    fields: w.fields,
    assignee: w.assignee,
    // The execution names its claimer as the daemon does (`key:<id>`): the tasks list has the name.
    claim: n.claimedBy === undefined ? null : { by: n.claimedBy, name: n.claimedBy, at: n.claimedAt ?? '' },
    dueAt: w.dueAt,
    waitingSince: n.startTime,
  };
}

/**
 * One execution, opened: its view, with its children listed under their nodes. With `focus`
 * nodes, ↑↓ move through the children (`cursor`), enter opens the one selected (`onOpen`); with
 * log, the log scrolls (↑↓ j k, PgUp PgDn, g top, G bottom and follow); with variables, the
 * variables whole, scrolled the same way. `a` hands the task it waits on to `onAnswer`.
 */
export function Detail(props: {
  readonly client: WfxClient;
  readonly id: string;
  readonly now: Date;
  readonly logRows: number;
  readonly width: number;
  /** Whether keys reach it (the screen is shown and no question is asked). */
  readonly active: boolean;
  /** The index of the selected child among those listed. */
  readonly cursor: number;
  readonly onCursor: (cursor: number) => void;
  readonly onOpen: (childId: string) => void;
  readonly focus?: DetailFocus;
  /** The task the execution waits on, when `a` is pressed (none: the key does nothing). */
  readonly onAnswer?: (task: Task) => void;
  /** Whether it waits on a task: the key bar offers `a` then. */
  readonly onWaiting?: (waiting: boolean) => void;
  /** Moves when the execution may have come back to life (retried here): an ended one is read again. */
  readonly changes?: number;
}) {
  const { client, id, now, logRows, width, active, cursor, onCursor, onOpen, focus = 'nodes' } = props;
  const { execution, logs, streaming, error } = useExecution(client, id, props.changes ?? 0);
  const children = useChildren(client, execution);
  const listed = listedChildren(children);
  const selected = listed.length > 0 ? listed[cursorAt(cursor, listed.length)]! : null;
  // Null: the log follows its tail; a number: the count of lines up to the last shown.
  const [logEnd, setLogEnd] = useState<number | null>(null);
  const [varsTop, setVarsTop] = useState(0);
  const variables = execution ? prettyLines((({ error: _, ...rest }) => rest)(execution.data)) : [];
  const varsRows = Math.max(3, logRows + 10);
  const task = execution ? waitingTask(execution) : null;
  const onWaiting = props.onWaiting;
  useEffect(() => onWaiting?.(task !== null), [onWaiting, task !== null]);
  const latest = useRef({
    listed,
    cursor,
    selected,
    logEnd,
    varsTop,
    count: logs.length,
    lines: variables.length,
    task,
  });
  latest.current = { listed, cursor, selected, logEnd, varsTop, count: logs.length, lines: variables.length, task };
  useInput(
    (input, key) => {
      const { listed, cursor, selected, logEnd, varsTop, count, lines, task } = latest.current;
      if (input === 'a' && task && focus !== 'variables') return props.onAnswer?.(task);
      if (focus === 'variables') {
        const next = scrollTo(varsTop, Math.max(0, lines - varsRows), varsRows - 1, input, key);
        if (next !== null) setVarsTop(next);
        return;
      }
      if (focus === 'log') {
        const rows = Math.max(1, logRows);
        const top = Math.max(0, (logEnd ?? count) - rows);
        const max = Math.max(0, count - rows);
        const next = scrollTo(top, max, rows - 1, input, key);
        // At the bottom (or G) the log follows new lines again.
        if (next !== null) setLogEnd(next >= max ? null : next + rows);
        return;
      }
      if (listed.length === 0) return;
      const next = moveCursor(cursor, listed.length, input, key);
      if (next !== cursor) onCursor(next);
      if (key.return && selected) onOpen(selected);
    },
    { isActive: active },
  );
  if (!execution) return <Text dimColor>{error ? `cannot read ${id}: ${error}` : `loading ${id}…`}</Text>;
  if (focus === 'variables')
    return (
      <VariablesView
        title={`${execution.processName} v${execution.processVersion} · ${execution.processInstanceId}`}
        lines={variables}
        top={Math.min(varsTop, Math.max(0, variables.length - varsRows))}
        rows={varsRows}
        width={width}
      />
    );
  return (
    <ExecutionView
      execution={execution}
      logs={logs}
      streaming={streaming}
      now={now}
      logRows={logRows}
      width={width}
      childGroups={children}
      selectedChild={selected}
      logEnd={logEnd}
      logFocused={focus === 'log'}
    />
  );
}
