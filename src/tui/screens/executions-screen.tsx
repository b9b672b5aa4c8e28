import { Box, Text, useInput } from 'ink';
import { useEffect, useRef, useState } from 'react';
import { ExecutionsTable } from '../components/executions-table.js';
import { KeyBar } from '../components/key-bar.js';
import { InputLine } from '../components/input-line.js';
import { cut } from '../format.js';
import { useOpened } from '../hooks/use-opened.js';
import { useWidth } from '../hooks/use-width.js';
import { editText } from '../text-edit.js';
import type { ExecutionSummary } from '../types.js';
import { SHELL_KEYS, type ScreenProps } from './screen.js';
import { cursorAt, moveCursor } from '../cursor.js';
import { listTable } from '../components/list-table-props.js';
import { Detail, type DetailFocus } from './execution-detail.js';
import { Answering, uploader } from './tasks-screen.js';
import type { Task } from '../hooks/use-tasks.js';
import { useNotice } from '../hooks/use-notice.js';
import { terminalCopy } from '../clipboard.js';
import { parseWhere } from '../../shared/flow/search-attributes.js';

const FILTERS = [null, 0, 'person', 2, 1, 3] as const;
const FILTER_WORDS = ['all', 'running', 'waiting for a person', 'failed', 'completed', 'cancelled'];

/** Whether `e` passes state filter `f` (FILTERS; null: all; `person`: running and waiting for a person). Pure. */
function passes(e: ExecutionSummary, f: (typeof FILTERS)[number]): boolean {
  if (f === null) return true;
  if (f === 'person') return e.stateCd === 0 && (e.waits ?? []).some((w) => w.for === 'person');
  return e.stateCd === f;
}

/** The flow names of `items`, sorted: what the flow filter cycles through after "all". */
export function flowNames(items: readonly ExecutionSummary[]): string[] {
  return [...new Set(items.map((e) => e.processName))].sort((a, b) => a.localeCompare(b));
}

/** The next flow filter after `current` (null = all): all, then each flow of the list by name, then all again. */
export function nextFlowFilter(current: string | null, names: readonly string[]): string | null {
  const i = current === null ? -1 : names.indexOf(current);
  return i + 1 < names.length ? names[i + 1]! : null;
}

/** Whether an execution's id, correlation key or a search attribute's value contains `search` (any case; '' matches all). */
export function matchesSearch(e: ExecutionSummary, search: string): boolean {
  const s = search.toLowerCase();
  return (
    e.processInstanceId.toLowerCase().includes(s) ||
    (e.correlationKey ?? '').toLowerCase().includes(s) ||
    Object.values(e.search ?? {}).some((v) => v.toLowerCase().includes(s))
  );
}

/** A search kept as `name=value`: what the daemon finds among every execution (`?where=`). */
interface DaemonSearch {
  readonly where: string;
  /** Its answer; null while it is asked. */
  readonly items: readonly ExecutionSummary[] | null;
  readonly error?: string;
}

/** An action waiting for the operator's y. */
interface Confirming {
  readonly action: 'cancel' | 'retry';
  readonly execution: ExecutionSummary;
}

/**
 * The executions screen: the live list; filters by state (`s`), by flow (`f`) and a search by id,
 * correlation key or search attribute value (`/`, applied as it is typed; kept as `name=value`, the
 * daemon's answer over every execution, a flow's `search:`); open one; cancel a running one or retry a
 * failed one (confirmed).
 */
export function ExecutionsScreen(
  props: ScreenProps & {
    readonly items: readonly ExecutionSummary[];
    /** Whether child executions are listed too (`a` toggles it; the list is read again). */
    readonly showChildren?: boolean;
    readonly onToggleChildren?: () => void;
    /** An execution to open (the shell's `:open`); `onOpened` says it was. */
    readonly toOpen?: string | null;
    readonly onOpened?: () => void;
  },
) {
  const { client, rows, now, active, items, setCapture, showChildren = false, onToggleChildren } = props;
  const copy = props.copy ?? terminalCopy();
  const width = useWidth();
  const [selected, setSelected] = useState(0);
  const [filter, setFilter] = useState(0);
  const [flow, setFlow] = useState<string | null>(null);
  const [search, setSearch] = useState('');
  const [searching, setSearching] = useState(false);
  const [asked, setAsked] = useState<DaemonSearch | null>(null);
  const opened = useOpened();
  const { open } = opened;
  const [confirm, setConfirm] = useState<Confirming | null>(null);
  const [focus, setFocus] = useState<DetailFocus>('nodes');
  const [answering, setAnswering] = useState<Task | null>(null);
  const [waitsOnTask, setWaitsOnTask] = useState(false);
  const [notice, setNotice] = useNotice(active);
  const [retries, setRetries] = useState(0);
  const { toOpen = null, onOpened } = props;
  useEffect(() => {
    if (toOpen === null) return;
    opened.openFromList(toOpen);
    onOpened?.();
  }, [toOpen, onOpened]);
  // A search kept as name=value is the daemon's answer over every execution, not the list's 50 a flow.
  const daemonItems = asked !== null && asked.where === search ? asked.items : null;
  const shown = (daemonItems ?? items).filter(
    (e) =>
      passes(e, FILTERS[filter]!) &&
      (flow === null || e.processName === flow) &&
      (daemonItems !== null || matchesSearch(e, search)),
  );
  const current = open
    ? (items.find((e) => e.processInstanceId === open) ?? null)
    : (shown[cursorAt(selected, shown.length)] ?? null);

  // Keys read the latest state through a ref: Ink re-attaches the handler after each paint, so a
  // key typed right after a paint would otherwise see the state before it.
  const latest = useRef({ confirm, open, current, shown, items, search, searching, focus, answering });
  latest.current = { confirm, open, current, shown, items, search, searching, focus, answering };
  const typeSearch = (text: string, typing: boolean) => {
    latest.current = { ...latest.current, search: text, searching: typing };
    setSearch(text);
    setSearching(typing);
    setSelected(0);
    if (typing || 'error' in parseWhere(text)) return setAsked(null);
    setAsked({ where: text, items: null });
    client.instances.search({ where: [text], limit: 200, ...(showChildren && { children: true }) }).then(
      (page) => setAsked((a) => (a?.where === text ? { where: text, items: page.items } : a)),
      (err: Error) => setAsked((a) => (a?.where === text ? { where: text, items: [], error: err.message } : a)),
    );
  };
  const ask = (c: Confirming | null) => {
    setConfirm(c);
    setCapture(c !== null);
  };
  useInput(
    (input, key) => {
      const { confirm, open, current, shown, items, search, searching, focus, answering } = latest.current;
      if (answering) return; // the answer form has the keys
      if (searching) {
        if (key.escape) typeSearch('', false);
        else if (key.return) typeSearch(search, false);
        else typeSearch(editText(search, input, key), true);
        if (key.escape || key.return) setCapture(false);
        return;
      }
      if (confirm) {
        const id = confirm.execution.processInstanceId;
        if (input === 'y' && confirm.action === 'cancel')
          client.instances.cancel(id).then(
            () => setNotice(`cancelled ${id}`),
            (err: Error) => setNotice(`not cancelled: ${err.message}`),
          );
        if (input === 'y' && confirm.action === 'retry')
          client.instances.retry(id).then(
            () => {
              setNotice(`retried ${id}: it runs again where it failed`);
              setRetries((n) => n + 1); // an open view of it follows the run again
            },
            (err: Error) => setNotice(`not retried: ${err.message}`),
          );
        return ask(null);
      }
      // The whole id, on the clipboard and in the notice (to select by mouse where OSC 52 is ignored).
      const id = open ?? current?.processInstanceId;
      if (input === 'y' && id) {
        copy(id);
        return setNotice(`copied ${id}`);
      }
      if (input === 'c' && current && current.stateCd === 0) return ask({ action: 'cancel', execution: current });
      if (input === 'r' && current && current.stateCd === 2 && current.parentInstanceId === null)
        return ask({ action: 'retry', execution: current });
      if (open) {
        if (focus === 'variables') {
          if (key.escape || input === 'v') setFocus('nodes');
          return;
        }
        if (key.tab) setFocus(focus === 'log' ? 'nodes' : 'log');
        if (input === 'v') setFocus('variables');
        if (key.escape || key.backspace || key.leftArrow) {
          opened.back();
          setFocus('nodes');
        }
        return;
      }
      setSelected((s) => moveCursor(s, shown.length, input, key));
      if (input === 's') {
        setFilter((f) => (f + 1) % FILTERS.length);
        setSelected(0);
      }
      if (input === 'f') {
        setFlow((f) => nextFlowFilter(f, flowNames(items)));
        setSelected(0);
      }
      if (input === '/') {
        typeSearch(search, true);
        setCapture(true);
      }
      if (input === 'a' && onToggleChildren) {
        onToggleChildren();
        setSelected(0);
      }
      if (key.return && current) opened.openFromList(current.processInstanceId);
    },
    { isActive: active },
  );

  const keys: Array<readonly [string, string]> = searching
    ? [
        ['enter', 'keep the search'],
        ['esc', 'clear it'],
        ['ctrl-u', 'empty it'],
      ]
    : open
      ? openKeys(focus, waitsOnTask)
      : [
          ['↑↓', 'move'],
          ['enter', 'open'],
          ['s', `state: ${FILTER_WORDS[filter]}`],
          ['f', `flow: ${flow === null ? 'all' : cut(flow, 20)}`],
          ['/', search ? `search: ${cut(search, 16)}${daemonItems !== null ? ' (every run)' : ''}` : 'search'],
          ...(onToggleChildren ? [['a', `children: ${showChildren ? 'shown' : 'hidden'}`] as const] : []),
          ['y', 'copy id'],
          ['c', 'cancel'],
          ['r', 'retry'],
          ...SHELL_KEYS,
        ];
  const filtered = filter !== 0 || flow !== null || search !== '';
  const closeAnswer = (what: string | null) => {
    setAnswering(null);
    setCapture(false);
    setNotice(what);
  };
  return (
    <Box flexDirection="column">
      {answering && (
        <Answering
          key={answering.nodeInstanceId}
          task={answering}
          submit={(body) => client.tasks.answer(body)}
          upload={uploader(client)}
          now={now}
          onDone={(what) => closeAnswer(what)}
          onClose={() => closeAnswer(null)}
        />
      )}
      {open ? (
        <Box display={answering ? 'none' : 'flex'} flexDirection="column">
          <Detail
            key={open}
            client={client}
            id={open}
            now={now}
            logRows={Math.max(3, rows - 16)}
            width={width}
            changes={retries}
            active={active && !confirm && !answering}
            cursor={opened.childCursor}
            onCursor={opened.setChildCursor}
            onOpen={opened.openChild}
            focus={focus}
            onWaiting={setWaitsOnTask}
            onAnswer={(task) => {
              latest.current = { ...latest.current, answering: task };
              setAnswering(task);
              setCapture(true);
              setNotice(null);
            }}
          />
        </Box>
      ) : (
        <ExecutionsTable
          items={shown}
          {...listTable(selected, shown.length, now, Math.max(3, rows - 6), width)}
          empty={
            asked !== null && asked.where === search
              ? asked.error !== undefined
                ? `the daemon did not answer the search: ${asked.error}`
                : asked.items === null
                  ? `asking the daemon for ${search}…`
                  : `no execution has ${search}`
              : filtered && items.length > 0
                ? `none of the ${items.length} executions match the filters`
                : 'no executions'
          }
        />
      )}
      {confirm && (
        <Text color="yellow">
          {confirm.action === 'cancel' ? 'Cancel' : 'Retry'} {confirm.execution.processName}{' '}
          {confirm.execution.processInstanceId}? y / n
        </Text>
      )}
      {notice && !confirm && <Text dimColor>{notice}</Text>}
      {searching && (
        <InputLine
          label="search /"
          value={search}
          width={width}
          placeholder="part of an id, a correlation key or a search value; name=value asks the daemon"
        />
      )}
      {!answering && <KeyBar keys={keys} />}
    </Box>
  );
}

/** The keys of an open execution, by the pane that has them (`tab` moves between nodes and log). */
function openKeys(focus: DetailFocus, waitsOnTask: boolean): Array<readonly [string, string]> {
  const answer = waitsOnTask ? [['a', 'answer'] as const] : [];
  if (focus === 'variables')
    return [['↑↓ pgup pgdn', 'scroll'], ['g G', 'top / bottom'], ['esc', 'back'], ['y', 'copy id'], ...SHELL_KEYS];
  if (focus === 'log')
    return [
      ['↑↓ pgup pgdn', 'scroll the log'],
      ['g G', 'top / bottom (follow)'],
      ['tab', 'nodes'],
      ['v', 'variables'],
      ...answer,
      ['esc', 'back'],
      ['y', 'copy id'],
      ...SHELL_KEYS,
    ];
  return [
    ['↑↓', 'child'],
    ['enter', 'open child'],
    ['tab', 'log'],
    ['v', 'variables'],
    ...answer,
    ['esc', 'back'],
    ['y', 'copy id'],
    ['c', 'cancel'],
    ['r', 'retry'],
    ...SHELL_KEYS,
  ];
}
