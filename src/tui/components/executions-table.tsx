import { Box, Text } from 'ink';
import { clock, duration, fit, shortId, stateView, windowStart } from '../format.js';
import type { ExecutionSummary } from '../types.js';

/**
 * Column widths of the executions table for a terminal `width` (pure). The correlation key gets
 * a column when some execution has one; the id is whole when the flow column keeps 20
 * characters, else its last 12 (what tells uuidv7 ids apart). Lines stay under `width`.
 */
export function executionColumns(width: number, hasKey: boolean): { flow: number; key: number; id: number } {
  const room = width - 1 - 33; // marker, state, started, time and their spaces are 33
  let key = hasKey ? 12 : 0;
  const keyCost = hasKey ? key + 1 : 0;
  const id = room - keyCost - 36 >= 20 ? 36 : 13;
  let flow = room - keyCost - id;
  if (hasKey && flow > 30) {
    const extra = Math.min(flow - 30, 12);
    key += extra;
    flow -= extra;
  }
  return { flow: Math.min(flow, 40), key, id };
}

/** The executions list: state (colour and symbol), flow, started, duration, correlation key (when any has one and it fits), id. */
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
  const cols = executionColumns(width, items.some((e) => e.correlationKey));
  const key = (text: string) => (cols.key > 0 ? `${fit(text, cols.key)} ` : '');
  return (
    <Box flexDirection="column">
      <Text bold>{`  ${fit('STATE', 12)} ${fit('FLOW', cols.flow)} ${fit('STARTED', 8)} ${fit('TIME', 7)} ${key('KEY')}ID`}</Text>
      {items.length === 0 && <Text dimColor>  {empty}</Text>}
      {visible.map((e, i) => {
        const v = stateView(e.stateCd);
        const at = first + i === selected;
        return (
          <Text key={e.processInstanceId} inverse={at}>
            {at ? '›' : ' '} <Text color={v.color}>{fit(`${v.symbol} ${v.word}`, 12)}</Text> {fit(`${e.processName} v${e.processVersion}`, cols.flow)} {fit(clock(e.startTime), 8)}{' '}
            {fit(duration(e.startTime, e.endTime, now), 7)} {key(e.correlationKey ?? '')}
            {shortId(e.processInstanceId, cols.id)}
          </Text>
        );
      })}
    </Box>
  );
}
