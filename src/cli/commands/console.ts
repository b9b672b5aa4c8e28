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
      "\nThe browser is $BROWSER, else the system's default (xdg-open, open, start).\n" +
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
      const opened = await openBrowser(ctx, url);
      const consoleAt = new URL('/', client.connection.url).href;
      if (opened) ctx.stdout.write(`opened the console (${consoleAt}) in your browser\n`);
      else ctx.stdout.write(`could not open a browser; open this link (good once, for two minutes):\n${url}\n`);
    });
}

/** Starts the user's browser on `url`, detached; false when it could not be started. */
function openBrowser(ctx: CliContext, url: string): Promise<boolean> {
  const [command, ...args] = browserCommand(ctx);
  return new Promise((resolve) => {
    const child = spawn(command!, [...args, url], { detached: true, stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
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
