import { Box, Text } from 'ink';

/** The keys of the current screen, at the bottom (on a second line when they do not fit one). */
export function KeyBar({ keys }: { readonly keys: ReadonlyArray<readonly [string, string]> }) {
  return (
    <Box flexWrap="wrap">
      {keys.map(([key, label]) => (
        <Box key={key} marginRight={2}>
          <Text inverse> {key} </Text>
          <Text> {label}</Text>
        </Box>
      ))}
    </Box>
  );
}
