import { Box, Text, useInput } from 'ink';
import { useRef, useState } from 'react';
import type { WfxClient } from '../../client/client.js';
import { ExecutionsTable } from '../components/executions-table.js';
import { FailuresTable } from '../components/failures-table.js';
import { KeyBar } from '../components/key-bar.js';
import { cursorAt, moveCursor } from '../cursor.js';
import { listTable } from '../components/list-table-props.js';
import { cut } from '../format.js';
import { useFailures, useGroupExecutions, type FailureGroup } from '../hooks/use-failures.js';
import { useOpened } from '../hooks/use-opened.js';
import { useWidth } from '../hooks/use-width.js';
import { Detail } from './execution-detail.js';
import { SHELL_KEYS, type ScreenProps } from './screen.js';
import { ReadError } from '../components/read-error.js';

/**
 * The failures screen: failed executions grouped by flow, failure code and node, the largest
 * group first, each with its count and newest execution's message; enter lists a group's
 * executions (newest first), enter again opens one, esc goes back. Re-read when executions
 * change and every `refreshMs` (5 s).
 */
export function FailuresScreen(props: ScreenProps & { readonly refreshMs?: number }) {
  const { client, rows, now, active, changes, refreshMs } = props;
  const width = useWidth();
  const { data, error } = useFailures(client, changes, refreshMs);
  const groups = data?.groups ?? [];
  const [selected, setSelected] = useState(0);
  const [open, setOpen] = useState<FailureGroup | null>(null);
  const current = groups[cursorAt(selected, groups.length)] ?? null;
  const latest = useRef({ groups, current });
  latest.current = { groups, current };
  useInput(
    (input, key) => {
      const { groups, current } = latest.current;
      setSelected((s) => moveCursor(s, groups.length, input, key));
      if (key.return && current) setOpen(current);
    },
    { isActive: active && open === null },
  );

  if (open)
    return (
      <GroupView
        key={`${open.processId} ${open.errorCode} ${open.nodeId ?? ''}`}
        client={client}
        group={open}
        rows={rows}
        now={now}
        width={width}
        active={active}
        changes={changes}
        onBack={() => setOpen(null)}
      />
    );
  return (
    <Box flexDirection="column">
      <ReadError error={error} what="the failures" forbidden="which the failures need" />
      {data ? (
        <>
          <Text>
            <Text color="red">✖ {data.total}</Text> failed execution{data.total === 1 ? '' : 's'} in {data.groupCount}{' '}
            group{data.groupCount === 1 ? '' : 's'} by flow, code and node · the largest first
          </Text>
          <FailuresTable groups={groups} {...listTable(selected, groups.length, now, Math.max(2, rows - 5), width)} />
        </>
      ) : (
        !error && <Text dimColor>loading the failures…</Text>
      )}
      <KeyBar keys={[['↑↓', 'move'], ['enter', 'its executions'], ...SHELL_KEYS]} />
    </Box>
  );
}

/** One group's executions, newest first; enter opens one (its children too), esc goes back. */
function GroupView(props: {
  readonly client: WfxClient;
  readonly group: FailureGroup;
  readonly rows: number;
  readonly now: Date;
  readonly width: number;
  readonly active: boolean;
  readonly changes: number;
  readonly onBack: () => void;
}) {
  const { client, group, rows, now, width, active, changes, onBack } = props;
  const { data, error } = useGroupExecutions(client, group, changes);
  const items = data ?? [];
  const [selected, setSelected] = useState(0);
  const opened = useOpened();
  const current = items[cursorAt(selected, items.length)] ?? null;
  const latest = useRef({ items, current, opened });
  latest.current = { items, current, opened };
  useInput(
    (input, key) => {
      const { items, current, opened } = latest.current;
      if (key.escape || key.backspace || key.leftArrow) {
        if (opened.open === null) return onBack();
        return opened.back();
      }
      if (opened.open !== null) return; // the opened execution's own keys (Detail)
      setSelected((s) => moveCursor(s, items.length, input, key));
      if (key.return && current) opened.openFromList(current.processInstanceId);
    },
    { isActive: active },
  );
  const { open } = opened;
  const where = `${group.errorCode} at ${group.nodeId ?? 'no node'} in ${group.processName ?? group.processId}`;
  return (
    <Box flexDirection="column">
      {open ? (
        <Detail
          key={open}
          client={client}
          id={open}
          now={now}
          logRows={Math.max(3, rows - 16)}
          width={width}
          active={active}
          cursor={opened.childCursor}
          onCursor={opened.setChildCursor}
          onOpen={opened.openChild}
        />
      ) : (
        <>
          <Text>
            <Text color="red">✖ {cut(where, width - 30)}</Text> · {group.count} failed
          </Text>
          {error && <Text color="red">✖ cannot read its executions: {error.text}</Text>}
          {data ? (
            <ExecutionsTable
              items={items}
              {...listTable(selected, items.length, now, Math.max(3, rows - 7), width)}
              empty="none of them is failed now (retried, or gone from history)"
            />
          ) : (
            !error && <Text dimColor>loading its executions…</Text>
          )}
          {current && <Text dimColor>{cut(`retry it: wfx instances retry ${current.processInstanceId}`, width)}</Text>}
        </>
      )}
      <KeyBar
        keys={
          open
            ? [['↑↓', 'child'], ['enter', 'open child'], ['esc', 'back'], ...SHELL_KEYS]
            : [['↑↓', 'move'], ['enter', 'open'], ['esc', 'back to the groups'], ...SHELL_KEYS]
        }
      />
    </Box>
  );
}
