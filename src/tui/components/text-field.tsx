import { Box, Text } from 'ink';

type Props = {
  readonly label: string;
  readonly value: string;
  /** Has the keys: marked with › and a cursor at the end. */
  readonly focused: boolean;
  readonly required: boolean;
  /** Several lines (textarea). */
  readonly multiline: boolean;
  /** What the text must be (`a number`), shown dim after it. */
  readonly hint: string;
  /** A problem with this field, shown after it (✖, so it reads without colour). */
  readonly problem: string | null;
  /** Lines shown of a multi-line value (its last ones). */
  readonly maxLines?: number;
};

/**
 * A field typed as text: one line, or several in a box. The cursor is a block at the end.
 * Each changing text is one string: Ink 5 drops a text node that grows from '' inside a <Text>.
 */
export function TextField({ label, value, focused, required, multiline, hint, problem, maxLines = 5 }: Props) {
  const cursor = focused ? '▌' : '';
  const head = (
    <Text>
      {focused ? '›' : ' '} <Text bold={focused}>{label}</Text>
      {required ? ' *' : ''}
    </Text>
  );
  const hinted = hint !== '' && <Text dimColor>{`  ${hint}`}</Text>;
  // On a line of its own: beside the field a long problem would squeeze the row and wrap it.
  const trouble = problem && <Text color="red">{`    ✖ ${problem}`}</Text>;
  if (!multiline) {
    return (
      <Box flexDirection="column">
        <Box>
          {head}
          <Text>{` [${value}${cursor}]`}</Text>
          {hinted}
        </Box>
        {trouble}
      </Box>
    );
  }
  const lines = value.split('\n');
  const shown = lines.slice(-maxLines);
  return (
    <Box flexDirection="column">
      <Box>
        {head}
        <Text dimColor>{`  ${lines.length} line${lines.length === 1 ? '' : 's'}`}</Text>
      </Box>
      {trouble}
      <Box flexDirection="column" borderStyle="single" borderDimColor={!focused} paddingX={1}>
        {lines.length > shown.length && <Text dimColor>…</Text>}
        {shown.map((line, i) => (
          <Text key={i}>{i === shown.length - 1 ? `${line}${cursor}` : line || ' '}</Text>
        ))}
      </Box>
    </Box>
  );
}
