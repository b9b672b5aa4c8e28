import { render } from 'ink';
import type { WfxClient } from '../client/client.js';
import { App } from './app.js';

const ALTERNATE_SCREEN = '\u001b[?1049h';
const MAIN_SCREEN = '\u001b[?1049l';
const CLEAR = '\u001b[2J\u001b[3J\u001b[H';

/**
 * Runs the TUI until the operator quits; resolves then. It draws on the terminal's alternate
 * screen, as less and vim do, so the shell's screen is back as it was afterwards (on any exit).
 * A resize or Ctrl-L clears the terminal and draws every line again: Ink alone redraws only the
 * lines it knows of, and a narrower terminal had rewrapped them, leaving stale lines.
 */
export async function runTui(client: WfxClient, url: string): Promise<void> {
  const out = process.stdout;
  out.write(ALTERNATE_SCREEN);
  let left = false;
  const leave = () => {
    if (left) return;
    left = true;
    out.write(MAIN_SCREEN);
  };
  process.once('exit', leave);
  let frame = 0;
  const element = () => <App client={client} url={url} rows={out.rows || 24} frame={frame} onRedraw={redraw} />;
  const app = render(element());
  function redraw(): void {
    frame++;
    out.write(CLEAR);
    app.clear();
    app.rerender(element());
  }
  out.on('resize', redraw);
  try {
    await app.waitUntilExit();
  } finally {
    out.off('resize', redraw);
    leave();
    process.off('exit', leave);
  }
}
