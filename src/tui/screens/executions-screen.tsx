import { Box, Text, useInput } from 'ink';
import { useRef, useState } from 'react';
import { ExecutionView } from '../components/execution-view.js';
import { ExecutionsTable } from '../components/executions-table.js';
import { KeyBar } from '../components/key-bar.js';
import { useExecution } from '../hooks/use-execution.js';
import type { ExecutionSummary } from '../types.js';
import { SHELL_KEYS, type ScreenProps } from './screen.js';
import type { ApiClient } from '../../cli/client.js';

const FILTERS = [null, 0, 2, 1, 3] as const;
const FILTER_WORDS = ['all', 'running', 'failed', 'completed', 'cancelled'];

/** The executions screen: the live list, a state filter, open one, cancel (confirmed). */
export function ExecutionsScreen(props: ScreenProps & { readonly items: readonly ExecutionSummary[] }) {
  const { client, rows, now, active, items, setCapture } = props;
  const [selected, setSelected] = useState(0);
  const [filter, setFilter] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<ExecutionSummary | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const shown = items.filter((e) => FILTERS[filter] === null || e.stateCd === FILTERS[filter]);
  const current = open ? (items.find((e) => e.processInstanceId === open) ?? null) : (shown[Math.min(selected, shown.length - 1)] ?? null);

  // Keys read the latest state through a ref: Ink re-attaches the handler after each paint, so a
  // key typed right after a paint would otherwise see the state before it.
  const latest = useRef({ confirm, open, current, shown });
  latest.current = { confirm, open, current, shown };
  const ask = (e: ExecutionSummary | null) => {
    setConfirm(e);
    setCapture(e !== null);
  };
  useInput(
    (input, key) => {
      const { confirm, open, current, shown } = latest.current;
      if (confirm) {
        if (input === 'y') {
          client.post(`/process/instance/${encodeURIComponent(confirm.processInstanceId)}/cancel`).then(
            () => setNotice(`cancelled ${confirm.processInstanceId}`),
            (err: Error) => setNotice(`not cancelled: ${err.message}`),
          );
        }
        return ask(null);
      }
      if (input === 'c' && current && current.stateCd === 0) return ask(current);
      if (open) {
        if (key.escape || key.backspace || key.leftArrow) setOpen(null);
        return;
      }
      if (key.upArrow || input === 'k') setSelected((s) => Math.max(0, s - 1));
      if (key.downArrow || input === 'j') setSelected((s) => Math.min(Math.max(0, shown.length - 1), s + 1));
      if (input === 's') {
        setFilter((f) => (f + 1) % FILTERS.length);
        setSelected(0);
      }
      if (key.return && current) setOpen(current.processInstanceId);
    },
    { isActive: active },
  );

  const keys: Array<readonly [string, string]> = open
    ? [['esc', 'back'], ['c', 'cancel'], ...SHELL_KEYS]
    : [['↑↓', 'move'], ['enter', 'open'], ['s', `state: ${FILTER_WORDS[filter]}`], ['c', 'cancel'], ...SHELL_KEYS];
  return (
    <Box flexDirection="column">
      {open ? (
        <Detail client={client} id={open} now={now} logRows={Math.max(3, rows - 16)} />
      ) : (
        <ExecutionsTable items={shown} selected={Math.min(selected, Math.max(0, shown.length - 1))} now={now} rows={Math.max(3, rows - 5)} />
      )}
      {confirm && <Text color="yellow">Cancel {confirm.processName} {confirm.processInstanceId}? y / n</Text>}
      {notice && !confirm && <Text dimColor>{notice}</Text>}
      <KeyBar keys={keys} />
    </Box>
  );
}

function Detail({ client, id, now, logRows }: { readonly client: ApiClient; readonly id: string; readonly now: Date; readonly logRows: number }) {
  const { execution, logs, error } = useExecution(client, id);
  if (!execution) return <Text dimColor>{error ? `cannot read ${id}: ${error}` : `loading ${id}…`}</Text>;
  return <ExecutionView execution={execution} logs={logs} now={now} logRows={logRows} />;
}
