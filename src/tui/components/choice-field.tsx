import { Box, Text } from 'ink';
import type { Choice } from '../answer.js';

type Props = {
  readonly label: string;
  readonly options: readonly Choice[];
  /** The option under the cursor (marked › while focused). */
  readonly cursor: number;
  readonly chosen: readonly number[];
  /** Several may be chosen: [x] boxes; else (•) buttons. */
  readonly multiple: boolean;
  readonly focused: boolean;
  readonly required: boolean;
  /** On one line after the label (form fields), else one option a line. */
  readonly inline: boolean;
  readonly problem: string | null;
};

/** Options to choose from: the chosen ones marked [x] or (•), so the choice reads without colour. */
export function ChoiceField({ label, options, cursor, chosen, multiple, focused, required, inline, problem }: Props) {
  const mark = (i: number) => (multiple ? (chosen.includes(i) ? '[x]' : '[ ]') : chosen.includes(i) ? '(•)' : '( )');
  const option = (c: Choice, i: number) => {
    const here = focused && i === cursor;
    return (
      <Text key={i} bold={here} color={chosen.includes(i) ? 'green' : undefined}>
        {`${here ? '›' : ' '}${mark(i)} ${c.label}`}
      </Text>
    );
  };
  const head = (
    <Text>
      {focused ? '›' : ' '} <Text bold={focused}>{label}</Text>
      {required ? ' *' : ''}
    </Text>
  );
  // On a line of its own: beside the options a long problem would squeeze the row and wrap it.
  const trouble = problem && <Text color="red">{`    ✖ ${problem}`}</Text>;
  const none = options.length === 0 && <Text dimColor> (no options)</Text>;
  if (inline) {
    return (
      <Box flexDirection="column">
        <Box>
          {head}
          <Text> </Text>
          {options.map((c, i) => (
            <Box key={i} marginRight={1}>
              {option(c, i)}
            </Box>
          ))}
          {none}
        </Box>
        {trouble}
      </Box>
    );
  }
  return (
    <Box flexDirection="column">
      <Box>
        {head}
        {none}
      </Box>
      {trouble}
      {options.map((c, i) => (
        <Box key={i} marginLeft={2}>
          {option(c, i)}
        </Box>
      ))}
    </Box>
  );
}
