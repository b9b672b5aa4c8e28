import { Box, Text } from 'ink';
import { cut, fit, windowStart } from '../format.js';
import { latestVersion, type FlowSummary } from '../hooks/use-flows.js';

/**
 * Column widths of the flows table for a terminal `width` (pure): the full processId when the
 * name keeps 20 columns, else its first 8 characters and …; the trigger types (`on-demand`,
 * `webhook`, …) once the whole processId fits and the name keeps 24 columns, else none (0): the name
 * and id matter more.
 */
export function flowColumns(
  width: number,
  environments: readonly string[],
): { name: number; id: number; env: number[]; triggers: number } {
  const env = environments.map((e) => Math.max(e.length, 4));
  const fixed = 2 + 7 + env.reduce((n, w) => n + w + 1, 0); // marker, LATEST, the environments
  const triggers = width - fixed - 37 - 25 >= TRIGGERS_WIDTH + 1 ? TRIGGERS_WIDTH : 0;
  const rest = width - fixed - (triggers ? triggers + 1 : 0);
  const id = rest - 37 >= 20 ? 36 : 10;
  return { name: Math.min(40, Math.max(12, rest - id - 1 - 1)), id, env, triggers };
}

/** Wide enough for `on-demand,webhook`; more is cut with …. */
const TRIGGERS_WIDTH = 18;

/** The flows: name, processId, its trigger types where they fit, latest version, the version active in each environment ('-' for none); the selected row marked. */
export function FlowsTable(props: {
  readonly flows: readonly FlowSummary[];
  readonly environments: readonly string[];
  readonly selected: number;
  /** Rows for the flows (the header is extra). */
  readonly rows: number;
  /** Terminal columns: the layout fits them (80 and up). */
  readonly width: number;
}) {
  const { flows, environments, selected, rows, width } = props;
  const cols = flowColumns(width, environments);
  const first = windowStart(selected, rows, flows.length);
  const envCells = (f: FlowSummary | null) =>
    environments.map((e, i) => fit(f ? (f.active[e] ? `v${f.active[e]}` : '-') : e, cols.env[i]!)).join(' ');
  const id = (processId: string) => (cols.id === 36 ? processId : `${processId.slice(0, 8)}…`);
  const triggers = (text: string) => (cols.triggers ? `${fit(text, cols.triggers)} ` : '');
  return (
    <Box flexDirection="column">
      <Text bold>
        {`  ${fit('FLOW', cols.name)} ${fit('PROCESS ID', cols.id)} ${triggers('TRIGGERS')}${fit('LATEST', 6)} ${envCells(null)}`.trimEnd()}
      </Text>
      {flows.length === 0 && <Text dimColor> no flows: publish one with wfx flow publish FILE</Text>}
      {flows.slice(first, first + rows).map((f, i) => {
        const at = first + i === selected;
        return (
          <Text key={f.processId} inverse={at}>
            {`${at ? '›' : ' '} ${fit(cut(f.name, cols.name), cols.name)} ${fit(id(f.processId), cols.id)} ${triggers(f.triggers.join(',') || '-')}${fit(`v${latestVersion(f)}`, 6)} ${envCells(f)}`.trimEnd()}
          </Text>
        );
      })}
    </Box>
  );
}
