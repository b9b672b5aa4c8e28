import { Box, Text } from 'ink';
import { cut } from '../format.js';

/** The lines of `value` as indented JSON (2 spaces): what the variables view scrolls through. */
export function prettyLines(value: unknown): string[] {
  return JSON.stringify(value, null, 2).split('\n');
}

/**
 * An execution's variables whole, as indented JSON, `rows` lines of it from `top` (the caller
 * scrolls: scrollTo), each cut to `width`; says which lines show and how many there are.
 */
export function VariablesView(props: {
  readonly title: string;
  readonly lines: readonly string[];
  readonly top: number;
  readonly rows: number;
  readonly width: number;
}) {
  const { lines, top, rows, width } = props;
  const shown = lines.slice(top, top + rows);
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>variables</Text> of {props.title}
        <Text dimColor>
          {' '}
          · lines {lines.length === 0 ? 0 : top + 1}-{top + shown.length} of {lines.length}
        </Text>
      </Text>
      {shown.map((line, i) => (
        <Text key={top + i}>{cut(line, Math.max(10, width - 1))}</Text>
      ))}
    </Box>
  );
}
