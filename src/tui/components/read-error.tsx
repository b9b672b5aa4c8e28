import { Text } from 'ink';

type Props = {
  /** The last read's error (usePolled's), or null. */
  readonly error: { readonly code: string | null; readonly text: string } | null;
  /** What the screen reads, as its lines name it: `trigger health`, `the failures`. */
  readonly what: string;
  /** The end of the FORBIDDEN line: `which trigger health needs`. */
  readonly forbidden: string;
};

/**
 * Why a screen's read failed: a credential without WORKFLOW_READ said as such (in yellow: the
 * credential, not the daemon, is at fault), any other error in red; nothing without an error.
 */
export function ReadError({ error, what, forbidden }: Props) {
  if (!error) return null;
  if (error.code === 'FORBIDDEN')
    return <Text color="yellow">✖ FORBIDDEN: this credential lacks WORKFLOW_READ, {forbidden}</Text>;
  return (
    <Text color="red">
      ✖ cannot read {what}: {error.text}
    </Text>
  );
}
