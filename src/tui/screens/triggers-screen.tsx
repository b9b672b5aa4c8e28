import { Box, Text, useInput } from 'ink';
import { useRef, useState } from 'react';
import { KeyBar } from '../components/key-bar.js';
import { TriggersTable } from '../components/triggers-table.js';
import { useTriggers } from '../hooks/use-triggers.js';
import { useWidth } from '../hooks/use-width.js';
import { SHELL_KEYS, type ScreenProps } from './screen.js';
import { cursorAt, moveCursor } from '../cursor.js';

/**
 * The trigger-health screen: every trigger of the active flow versions with its state, last and
 * next fire and its last error; re-read when executions change and every `refreshMs` (5 s).
 */
export function TriggersScreen(props: ScreenProps & { readonly refreshMs?: number }) {
  const { client, rows, now, active, changes, refreshMs } = props;
  const width = useWidth();
  const { data, error } = useTriggers(client, changes, refreshMs);
  const triggers = data ?? [];
  const [selected, setSelected] = useState(0);
  const latest = useRef(triggers.length);
  latest.current = triggers.length;
  useInput(
    (input, key) => {
      setSelected((s) => moveCursor(s, latest.current, input, key));
    },
    { isActive: active },
  );

  const count = (state: string) => triggers.filter((t) => t.state === state).length;
  return (
    <Box flexDirection="column">
      {error?.code === 'FORBIDDEN' ? (
        <Text color="yellow">✖ FORBIDDEN: this credential lacks WORKFLOW_READ, which trigger health needs</Text>
      ) : error ? (
        <Text color="red">✖ cannot read trigger health: {error.text}</Text>
      ) : null}
      {data ? (
        <>
          <Text>
            {triggers.length} trigger{triggers.length === 1 ? '' : 's'} ·{' '}
            <Text color="green">● {count('active')} active</Text> ·{' '}
            <Text color="red">✖ {count('failing')} failing</Text> ·{' '}
            <Text color="gray">○ {count('disabled')} disabled</Text>
          </Text>
          <TriggersTable
            triggers={triggers}
            selected={cursorAt(selected, triggers.length)}
            now={now}
            rows={Math.max(3, rows - 5)}
            width={width}
          />
        </>
      ) : (
        !error && <Text dimColor>loading trigger health…</Text>
      )}
      <KeyBar keys={[['↑↓', 'move'], ...SHELL_KEYS]} />
    </Box>
  );
}
