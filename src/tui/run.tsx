import { render } from 'ink';
import type { WfxClient } from '../client/client.js';
import { App } from './app.js';

/** Runs the TUI until the operator quits; resolves then. */
export async function runTui(client: WfxClient, url: string): Promise<void> {
  const app = render(<App client={client} url={url} rows={process.stdout.rows || 24} />);
  await app.waitUntilExit();
}
