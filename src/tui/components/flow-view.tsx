import { Box, Text } from 'ink';
import { fit, stamp } from '../format.js';
import type { FlowSummary } from '../hooks/use-flows.js';

/** One flow: its id and organization, and its versions newest first with when each was published and where it is active. */
export function FlowView(props: {
  readonly flow: FlowSummary;
  readonly environments: readonly string[];
  /** Rows for the versions (older ones are counted, not listed). */
  readonly rows: number;
}) {
  const { flow, environments, rows } = props;
  const versions = [...flow.versions].sort((a, b) => Number(b.version) - Number(a.version));
  const shown = versions.slice(0, Math.max(1, rows));
  const activeIn = (v: string) => environments.filter((e) => flow.active[e] === v);
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>{flow.name}</Text> · {flow.processId}
      </Text>
      <Text dimColor>
        organization {flow.organization} · {flow.public ? 'public' : 'not public'} · {versions.length} version
        {versions.length === 1 ? '' : 's'}
      </Text>
      <Box marginTop={1} flexDirection="column">
        <Text bold>{`  ${fit('VERSION', 8)} ${fit('PUBLISHED', 20)} ACTIVE IN`}</Text>
        {shown.map((v) => {
          const envs = activeIn(v.version);
          return (
            <Text key={v.version}>
              {envs.length > 0 ? <Text color="green">● </Text> : '  '}
              {fit(`v${v.version}`, 8)} {fit(stamp(v.publishedAt), 20)}{' '}
              {envs.length > 0 ? envs.join(', ') : <Text dimColor>-</Text>}
            </Text>
          );
        })}
        {versions.length > shown.length && <Text dimColor> … {versions.length - shown.length} older</Text>}
      </Box>
    </Box>
  );
}
