import { Text } from 'ink';
import type { Connection } from '../types.js';

/** One line saying whether the daemon answers, and that the TUI reconnects when it does not. */
export function ConnectionLine({ url, connection }: { readonly url: string; readonly connection: Connection }) {
  if (connection.state !== 'reconnecting')
    return (
      <Text dimColor>
        {url} · {connection.state === 'live' ? 'live' : 'connecting…'}
      </Text>
    );
  return (
    <Text color="yellow">
      {url} · daemon unreachable ({connection.error}) · reconnecting…
    </Text>
  );
}
