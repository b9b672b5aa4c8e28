import { Box, Text } from 'ink';
import { InputLine } from './input-line.js';

/** The form that starts a run of a flow: where, which version, the data typed in, and what went wrong. */
export function RunForm(props: {
  readonly flowName: string;
  readonly environment: string;
  /** The version active in `environment`, or null when none is. */
  readonly activeVersion: string | null;
  /** 'active', or the version number chosen. */
  readonly version: string;
  /** The data as typed (a JSON object). */
  readonly data: string;
  /** Why the last enter did not start it (a local check, or the API's `CODE: message`). */
  readonly problem: string | null;
  /** True while the start request is under way. */
  readonly busy: boolean;
  readonly width: number;
}) {
  const { flowName, environment, activeVersion, version, data, problem, busy, width } = props;
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text bold>start a run of {flowName}</Text>
      <Text>
        <Text bold>environment</Text> {environment}{' '}
        {activeVersion ? (
          <Text dimColor>(active v{activeVersion})</Text>
        ) : (
          <Text color="yellow">(no active version: pick one with ↑↓)</Text>
        )}
      </Text>
      <Text>
        <Text bold>version </Text>{' '}
        {version === 'active' ? `the active one${activeVersion ? ` (v${activeVersion})` : ''}` : `v${version}`}
      </Text>
      <InputLine label="data       " value={data} width={width} placeholder='a JSON object, e.g. {"orderId": 42}' />
      {busy && <Text dimColor>starting…</Text>}
      {problem && !busy && <Text color="red">✖ {problem}</Text>}
    </Box>
  );
}
