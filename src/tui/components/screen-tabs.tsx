import { Box, Text } from 'ink';

/**
 * The screens with their number keys, the current one marked: bracketed, and inverse where styles
 * show. `compact` (a narrow terminal): the others by their number only, so the connection line
 * beside the tabs keeps its state in sight (the help and the key bar name every screen).
 */
export function ScreenTabs({
  screens,
  current,
  compact = false,
}: {
  readonly screens: readonly string[];
  readonly current: string;
  readonly compact?: boolean;
}) {
  return (
    <Box>
      {screens.map((s, i) => (
        <Box key={s} marginLeft={1}>
          {s === current ? (
            <Text inverse>{`[${i + 1} ${s}]`}</Text>
          ) : (
            <Text dimColor>{compact ? ` ${i + 1} ` : ` ${i + 1} ${s} `}</Text>
          )}
        </Box>
      ))}
    </Box>
  );
}
