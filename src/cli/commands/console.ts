import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { clientFor } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';

/** `wfx console`: the browser console, signed in through a one-time link of the CLI's API key. */
export function registerConsole(program: Command, ctx: CliContext): void {
  program
    .command('console')
    .description('open the browser console, signed in (a one-time link: good once, for two minutes)')
    .option('--no-open', 'print the link instead of opening a browser')
    .addHelpText(
      'after',
      "\nThe browser is $BROWSER, else the system's default (xdg-open, open, start). When none opens\n" +
        '(no display, as over SSH or in a container; an opener that fails), the link is printed.\n' +
        'Examples:\n  $ wfx console\n  $ wfx console --no-open',
    )
    .action(async (opts: { open: boolean }, cmd: Command) => {
      const g = globals(cmd);
      const client = await clientFor(ctx, cmd);
      const link = await client.auth.signInLink();
      // The daemon's address as this CLI reaches it (the daemon may know itself by another).
      const url = new URL(link.path, client.connection.url).href;
      if (g.json) return printJson(ctx, { url });
      if (!opts.open) {
        ctx.stdout.write(`${url}\n`);
        return;
      }
      const consoleAt = new URL('/', client.connection.url).href;
      const opened = await openBrowser(ctx, url);
      if (opened === null) ctx.stdout.write(`opened the console (${consoleAt}) in your browser\n`);
      else
        ctx.stdout.write(
          `could not open a browser (${opened}); open this link (good once, for two minutes):\n${url}\n`,
        );
    });
}

/** How long an opener may run before it counts as a browser that took the link and stays open. */
const OPENER_SETTLE_MS = 3000;

/**
 * Starts the user's browser on `url`, detached: null once it took the link, else why not. An
 * opener that exits with a failure (xdg-open with no browser, BROWSER=/bin/false) did not open
 * one; one still running after OPENER_SETTLE_MS is a browser that took the link. With no display
 * (an SSH session, a container) and no $BROWSER, nothing is tried.
 */
function openBrowser(ctx: CliContext, url: string): Promise<string | null> {
  const noDisplay =
    !ctx.env.BROWSER &&
    process.platform !== 'darwin' &&
    process.platform !== 'win32' &&
    !ctx.env.DISPLAY &&
    !ctx.env.WAYLAND_DISPLAY;
  if (noDisplay) return Promise.resolve('no display: DISPLAY and WAYLAND_DISPLAY are unset');
  const [command, ...args] = browserCommand(ctx);
  return new Promise((resolve) => {
    const child = spawn(command!, [...args, url], { detached: true, stdio: 'ignore' });
    const timer = setTimeout(() => {
      child.removeAllListeners('exit');
      child.unref();
      resolve(null);
    }, OPENER_SETTLE_MS);
    timer.unref();
    child.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(`${command}: ${err.code === 'ENOENT' ? 'not found' : err.message}`);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code === 0 ? null : `${command} ${signal !== null ? `ended by ${signal}` : `exited with ${code}`}`);
    });
  });
}

function browserCommand(ctx: CliContext): string[] {
  const chosen = ctx.env.BROWSER;
  if (chosen) return [chosen];
  if (process.platform === 'darwin') return ['open'];
  if (process.platform === 'win32') return ['cmd', '/c', 'start', '""'];
  return ['xdg-open'];
}
