import { Box, Text, useApp, useInput, type Key } from 'ink';
import { useEffect, useRef, useState } from 'react';
import type { WfxClient } from '../client/client.js';
import { executionIdOf } from '../client/execution-id.js';
import type { Copy } from './clipboard.js';
import { keysOf } from './answer.js';
import { completeCommand, parseCommand } from './command.js';
import { InputLine } from './components/input-line.js';
import { errorText } from './error-text.js';
import { useNotice } from './hooks/use-notice.js';
import { editText } from './text-edit.js';
import { ConnectionError, ConnectionLine } from './components/connection-line.js';
import { Help } from './components/help.js';
import { ScreenTabs } from './components/screen-tabs.js';
import { useExecutions } from './hooks/use-executions.js';
import { useWidth } from './hooks/use-width.js';
import { ExecutionsScreen } from './screens/executions-screen.js';
import { FlowsScreen } from './screens/flows-screen.js';
import { SCREENS, type ScreenName, type ScreenProps } from './screens/screen.js';
import { TasksScreen } from './screens/tasks-screen.js';
import { TriggersScreen } from './screens/triggers-screen.js';
import { FailuresScreen } from './screens/failures-screen.js';

/** The narrowest terminal whose top line names every screen (narrower: the others by number). */
const WIDE = 100;

/** The current time, ticking each second (durations of running executions). */
function useNow(): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const t = setInterval(() => setNow(new Date()), 1000);
    return () => clearInterval(t);
  }, []);
  return now;
}

/**
 * The shell: the connection line on top, one screen below, and the keys every screen shares
 * (1-5 switch screens, ? help, q quit, `:` the command line) unless the screen is taking typed
 * text. The command line, open, takes every key.
 */
export function App({
  client,
  url,
  rows = 24,
  frame = 0,
  onRedraw,
  copy,
}: {
  readonly client: WfxClient;
  readonly url: string;
  readonly rows?: number;
  /** Counts full redraws (run.tsx): each one changes the output, so Ink writes every line again. */
  readonly frame?: number;
  /** Ctrl-L: clear the terminal and draw everything again. */
  readonly onRedraw?: () => void;
  /** Puts an id on the clipboard (`y`); default OSC 52 to the terminal. */
  readonly copy?: Copy;
}) {
  const { exit } = useApp();
  // Top-level executions; `a` on the executions screen adds their children (loop iterations, ...).
  const [showChildren, setShowChildren] = useState(false);
  const { items, connection, changes } = useExecutions(client, showChildren);
  const [screen, setScreen] = useState<ScreenName>('executions');
  const [help, setHelp] = useState(false);
  const capture = useRef(false);
  // The `:` line being typed (null: closed); an execution `:open` asked for, until the screen opens it.
  const [command, setCommand] = useState<string | null>(null);
  const typed = useRef<string | null>(null);
  const [toOpen, setToOpen] = useState<string | null>(null);
  const [notice, setNotice] = useNotice(command === null && !help);
  const now = useNow();
  const width = useWidth();

  useInput((input, key) => {
    if (key.ctrl && input === 'l') return onRedraw?.();
    if (help) return setHelp(false);
    // Keys typed fast (or by tmux send-keys) arrive in one chunk: each counts.
    if (typed.current !== null) {
      for (const [i, k] of keysOf(input, key)) if (typed.current !== null) typeCommand(typed.current, i, k);
      return;
    }
    if (capture.current) return;
    if (input.startsWith(':') && !key.ctrl && !key.meta) {
      openCommand('');
      for (const [i, k] of keysOf(input.slice(1), key)) if (typed.current !== null) typeCommand(typed.current, i, k);
      return;
    }
    if (input === 'q') return exit();
    if (input === '?') return setHelp(true);
    const n = Number(input);
    if (Number.isInteger(n) && n >= 1 && n <= SCREENS.length) setScreen(SCREENS[n - 1]!);
  });

  function openCommand(line: string | null) {
    typed.current = line;
    setCommand(line);
  }
  function typeCommand(line: string, input: string, key: Key) {
    if (key.escape) return openCommand(null);
    if (key.tab) return openCommand(completeCommand(line));
    if (!key.return) return openCommand(editText(line, input, key));
    openCommand(null);
    const c = parseCommand(line);
    if (c.kind === 'quit') return exit();
    if (c.kind === 'screen') return setScreen(c.screen);
    if (c.kind === 'unknown') return setNotice(`✖ ${c.problem}`);
    if (c.kind === 'open')
      executionIdOf(client, c.id).then(
        (id) => {
          setScreen('executions');
          setToOpen(id);
        },
        (err: unknown) => setNotice(`✖ cannot open ${c.id}: ${errorText(err)}`),
      );
  }

  const props: ScreenProps = {
    client,
    rows: rows - 1,
    now,
    active: !help && command === null,
    ...(copy && { copy }),
    changes,
    // Every useInput handler sees the same key, in an order Ink does not promise: the change
    // lands after this key's handlers have all run, so the shell and the screen agree on it.
    setCapture: (c) => {
      queueMicrotask(() => {
        capture.current = c;
      });
    },
  };
  return (
    <Box flexDirection="column">
      <Box justifyContent="space-between">
        {/* The tabs keep their width; the connection line takes what is left, cut short if need be. */}
        <Box flexGrow={1} flexShrink={1} minWidth={0}>
          <ConnectionLine url={url} connection={connection} />
        </Box>
        <Box flexShrink={0}>
          <ScreenTabs screens={SCREENS} current={screen} compact={width < WIDE} />
          {/* Zero width: a zero-width space on every other frame, so a redraw's output differs. */}
          <Text>{frame % 2 === 1 ? '\u200b' : ''}</Text>
        </Box>
      </Box>
      <ConnectionError connection={connection} />
      {help ? (
        <Help />
      ) : screen === 'executions' ? (
        <ExecutionsScreen
          {...props}
          items={items}
          showChildren={showChildren}
          onToggleChildren={() => setShowChildren((c) => !c)}
          toOpen={toOpen}
          onOpened={() => setToOpen(null)}
        />
      ) : screen === 'tasks' ? (
        <TasksScreen {...props} />
      ) : screen === 'flows' ? (
        <FlowsScreen {...props} />
      ) : screen === 'triggers' ? (
        <TriggersScreen {...props} />
      ) : (
        <FailuresScreen {...props} />
      )}
      {notice && command === null && !help && <Text color={notice.startsWith('✖') ? 'red' : undefined}>{notice}</Text>}
      {command !== null && (
        <InputLine
          label=":"
          value={command}
          width={width}
          placeholder="executions, tasks, flows, triggers, failures, open <id>, quit"
        />
      )}
    </Box>
  );
}
