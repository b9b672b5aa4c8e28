import { Box, Text } from 'ink';
import { clock, duration, fit, stateView } from '../format.js';
import type { ExecutionSummary } from '../types.js';

/** The executions list: state (colour and symbol), flow, started, duration, id. */
export function ExecutionsTable(props: { readonly items: readonly ExecutionSummary[]; readonly selected: number; readonly now: Date; readonly rows: number }) {
  const { items, selected, now, rows } = props;
  const first = Math.max(0, Math.min(selected - Math.floor(rows / 2), items.length - rows));
  const visible = items.slice(first, first + rows);
  return (
    <Box flexDirection="column">
      <Text bold>{`  ${fit('STATE', 12)} ${fit('FLOW', 26)} ${fit('STARTED', 9)} ${fit('TIME', 8)} ID`}</Text>
      {items.length === 0 && <Text dimColor>  no executions</Text>}
      {visible.map((e, i) => {
        const v = stateView(e.stateCd);
        const at = first + i === selected;
        return (
          <Text key={e.processInstanceId} inverse={at}>
            {at ? '›' : ' '} <Text color={v.color}>{fit(`${v.symbol} ${v.word}`, 12)}</Text> {fit(`${e.processName} v${e.processVersion}`, 26)} {fit(clock(e.startTime), 9)}{' '}
            {fit(duration(e.startTime, e.endTime, now), 8)} {e.processInstanceId}
          </Text>
        );
      })}
    </Box>
  );
}
