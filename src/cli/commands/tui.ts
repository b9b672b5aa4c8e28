import type { Command } from 'commander';
import { WfxClient } from '../../client/client.js';
import { globals, type CliContext } from '../context.js';
import { resolveConnection } from '../credentials.js';
import { WfxError } from '../../shared/errors.js';

/** `wfx tui`: the operator console (React and Ink load only when it runs). */
export function registerTui(program: Command, ctx: CliContext): void {
  program
    .command('tui')
    .description(
      'the operator console: executions live, waiting tasks answered with a form, flows and their runs, trigger health (keys: ? for help, q to quit)',
    )
    .addHelpText('after', '\nExample:\n  $ wfx tui --url http://127.0.0.1:7878')
    .action(async (_opts: unknown, cmd: Command) => {
      if (!ctx.stdout.isTTY || !ctx.stdin.isTTY)
        throw new WfxError('USAGE_ERROR', 'wfx tui needs a terminal (stdin and stdout a TTY)');
      const connection = await resolveConnection(ctx, globals(cmd));
      // Ink draws only the last frame when it believes it runs in CI (a CI variable is set); the
      // TTY check above says a person is watching, so it must draw every frame. Set before Ink loads.
      process.env.CI = 'false';
      const { runTui } = await import('../../tui/run.js'); // React and Ink load only here
      await runTui(new WfxClient(connection), connection.url);
    });
}
