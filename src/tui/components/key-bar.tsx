import { Box, Text } from 'ink';

/** The keys of the current screen, at the bottom. */
export function KeyBar({ keys }: { readonly keys: ReadonlyArray<readonly [string, string]> }) {
  return (
    <Box>
      {keys.map(([key, label]) => (
        <Box key={key} marginRight={2}>
          <Text inverse> {key} </Text>
          <Text> {label}</Text>
        </Box>
      ))}
    </Box>
  );
}
