import { Box, Text } from 'ink';
import { clock, duration, envWord, fit, idColumns, shortId, listedStateView, windowStart } from '../format.js';
import type { ExecutionSummary } from '../types.js';

/** Width of the WAITING column (the node ids an execution waits at). */
const WAITING = 10;

/**
 * Column widths of the executions table for a terminal `width` (pure). WAITING (where a running
 * execution waits) gets a column when some execution waits, and the correlation key when some
 * execution has one; when both would leave the flow under 16 characters, STARTED gives way (TIME
 * still shows the age). The id is whole when the flow keeps 18 characters, else its head in
 * `narrowId` columns (idColumns: enough to tell the listed ids apart, so it can be typed to wfx).
 * The flow column is as wide as its longest label (`longestFlow`) when the room allows, at least
 * 40: a long name is not cut while the terminal has width left.
 * ENV (the environment) shows whenever the list mixes `environments` (`PROD`/`DEV` when narrow),
 * else when the flow can spare it. Lines stay under `width`.
 */
export function executionColumns(
  width: number,
  hasKey: boolean,
  hasWaiting = false,
  longestFlow = 0,
  environments = 1,
  narrowId = 13,
): { flow: number; started: number; waiting: number; key: number; id: number; env: number } {
  const waiting = hasWaiting ? WAITING : 0;
  // marker, state, time and their spaces are 24; started 9 more; waiting and key their width + 1.
  let room = width - 1 - 24 - (waiting > 0 ? waiting + 1 : 0);
  let key = hasKey ? 12 : 0;
  let started = 8;
  if (key > 0 && room - 9 - 13 - 13 < 16) started = 0;
  room -= started > 0 ? started + 1 : 0;
  if (key > 0 && room - 13 - 13 < 16) key = 0;
  const keyCost = key > 0 ? key + 1 : 0;
  // A wider head than 13 only while the flow keeps 18 characters.
  const id = room - keyCost - 36 >= 18 ? 36 : Math.max(13, Math.min(narrowId, room - keyCost - 18));
  let flow = room - keyCost - id;
  // ENV: always when the list mixes environments (abbreviated), else from the room the flow spares.
  let env = environments > 1 ? 4 : 0;
  const spare = flow - (env && env + 1) - Math.max(20, longestFlow);
  if (env === 0 && spare >= 5) env = 4;
  if (env === 4 && spare >= (environments > 1 ? 7 : 12)) env = 11;
  flow -= env && env + 1;
  if (key > 0 && flow > 30) {
    const extra = Math.min(flow - 30, 12);
    key += extra;
    flow -= extra;
  }
  return { flow: Math.min(flow, Math.max(40, longestFlow)), started, waiting, key, id, env };
}

/** The executions list: state (colour and symbol), flow, started, duration, where it waits, correlation key (when any has one and it fits), environment (executionColumns), id. */
export function ExecutionsTable(props: {
  readonly items: readonly ExecutionSummary[];
  readonly selected: number;
  readonly now: Date;
  readonly rows: number;
  /** Terminal columns (default 100): the layout fits them, from 80 up. */
  readonly width?: number;
  /** What to say when there is nothing to list (default: no executions). */
  readonly empty?: string;
}) {
  const { items, selected, now, rows, width = 100, empty = 'no executions' } = props;
  const first = windowStart(selected, rows, items.length);
  const visible = items.slice(first, first + rows);
  const cols = executionColumns(
    width,
    items.some((e) => e.correlationKey),
    items.some((e) => e.waitingNodeIds.length > 0),
    Math.max(0, ...visible.map((e) => flowLabel(e).length)),
    new Set(items.map((e) => e.environment)).size,
    idColumns(
      visible.map((e) => e.processInstanceId),
      13,
    ),
  );
  const env = (text: string) => (cols.env > 0 ? `${fit(envWord(text, cols.env), cols.env)} ` : '');
  const key = (text: string) => (cols.key > 0 ? `${fit(text, cols.key)} ` : '');
  const waiting = (text: string) => (cols.waiting > 0 ? `${fit(text, cols.waiting)} ` : '');
  const started = (text: string) => (cols.started > 0 ? `${fit(text, cols.started)} ` : '');
  return (
    <Box flexDirection="column">
      <Text
        bold
      >{`  ${fit('STATE', 12)} ${fit('FLOW', cols.flow)} ${started('STARTED')}${fit('TIME', 7)} ${waiting('WAITING')}${key('KEY')}${env('ENV')}ID`}</Text>
      {items.length === 0 && <Text dimColor> {empty}</Text>}
      {visible.map((e, i) => {
        const v = listedStateView(e);
        const at = first + i === selected;
        return (
          <Text key={e.processInstanceId} inverse={at}>
            {at ? '›' : ' '} <Text color={v.color}>{fit(`${v.symbol} ${v.word}`, 12)}</Text>{' '}
            {fit(
              `${e.parentInstanceId ? '↳ ' : ''}${e.processName} v${e.processVersion}${e.childCount > 0 ? ` (+${e.childCount})` : ''}`,
              cols.flow,
            )}{' '}
            {started(clock(e.startTime))}
            {fit(duration(e.startTime, e.endTime, now), 7)}{' '}
            {waiting(e.queuePosition === undefined ? e.waitingNodeIds.join(',') : `queued #${e.queuePosition}`)}
            {key(e.correlationKey ?? '')}
            {env(e.environment)}
            {shortId(e.processInstanceId, cols.id)}
          </Text>
        );
      })}
    </Box>
  );
}

/** The flow column of a row: a child marked ↳, the version, a parent's count of children. */
function flowLabel(e: ExecutionSummary): string {
  return `${e.parentInstanceId ? '↳ ' : ''}${e.processName} v${e.processVersion}${e.childCount > 0 ? ` (+${e.childCount})` : ''}`;
}
