import { Box, Text } from 'ink';
import { cut, fit, relativeTime } from '../format.js';
import type { FailureGroup } from '../hooks/use-failures.js';
import type { ListTableProps } from './list-table-props.js';

/** Lines one group takes: its row, and its newest execution's message. */
const LINES = 2;

/**
 * Failures grouped: one row per group (count, failure code, the node they failed at, flow and
 * the newest's version, how long ago the newest failed), under it the newest's message. Fits
 * 80 columns; the flow column takes what is left.
 */
export function FailuresTable(props: ListTableProps & { readonly groups: readonly FailureGroup[] }) {
  const { groups, selected, now, rows, width } = props;
  const codeW = 22;
  const nodeW = 16;
  const flowW = Math.max(12, width - 1 - (2 + 6 + codeW + 1 + nodeW + 1 + 1 + 9));
  const fits = Math.max(1, Math.floor(rows / LINES));
  const first = Math.max(0, Math.min(selected - fits + 1, groups.length - fits));
  const visible = groups.slice(first, first + fits);
  return (
    <Box flexDirection="column">
      <Text
        bold
      >{`  ${fit('COUNT', 5)} ${fit('CODE', codeW)} ${fit('NODE', nodeW)} ${fit('FLOW', flowW)} NEWEST`}</Text>
      {groups.length === 0 && <Text dimColor> no failed executions</Text>}
      {visible.map((g, i) => {
        const at = first + i === selected;
        const node = g.nodeId === null ? '-' : g.nodeId;
        return (
          <Box key={`${g.processId} ${g.errorCode} ${g.nodeId ?? ''}`} flexDirection="column">
            <Text inverse={at}>
              {at ? '›' : ' '} {String(g.count).padStart(5)} <Text color="red">{fit(g.errorCode, codeW)}</Text>{' '}
              {fit(node, nodeW)} {fit(`${g.processName ?? g.processId} v${g.newest.processVersion}`, flowW)}{' '}
              {relativeTime(g.newest.at, now)}
            </Text>
            <Text dimColor>{`    ${cut((g.newest.message ?? '').replace(/\s+/g, ' '), width - 5)}`}</Text>
          </Box>
        );
      })}
    </Box>
  );
}
