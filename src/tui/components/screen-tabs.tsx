import { Box, Text } from 'ink';

/** The screens with their number keys, the current one marked: bracketed, and inverse where styles show. */
export function ScreenTabs({ screens, current }: { readonly screens: readonly string[]; readonly current: string }) {
  return (
    <Box>
      {screens.map((s, i) => (
        <Box key={s} marginLeft={1}>
          {s === current ? <Text inverse>{`[${i + 1} ${s}]`}</Text> : <Text dimColor>{` ${i + 1} ${s} `}</Text>}
        </Box>
      ))}
    </Box>
  );
}
