import { Text } from 'ink';
import type { Connection } from '../types.js';

/**
 * One line saying whether the daemon answers, and that the TUI reconnects when it does not; cut
 * short rather than wrapped when the terminal is narrow (the error has a line of its own below).
 */
export function ConnectionLine({ url, connection }: { readonly url: string; readonly connection: Connection }) {
  if (connection.state !== 'reconnecting')
    return (
      <Text dimColor wrap="truncate-end">
        {url} · {connection.state === 'live' ? 'live' : 'connecting…'}
      </Text>
    );
  return (
    <Text color="yellow" wrap="truncate-end">
      {url} · unreachable
    </Text>
  );
}

/** Why the daemon does not answer, on its own line under the header (none while it answers). */
export function ConnectionError({ connection }: { readonly connection: Connection }) {
  if (connection.state !== 'reconnecting') return null;
  return (
    <Text color="yellow" wrap="truncate-end">
      {connection.error} · reconnecting…
    </Text>
  );
}
