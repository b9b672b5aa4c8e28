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
      // The TTY check above says a person is watching, whatever CI variables a parent set: Ink
      // would draw only the last frame (is-in-ci), and chalk would colour nothing ('CI' in env),
      // even for CI=false. So they go, before Ink and chalk load.
      for (const name of Object.keys(process.env))
        if (name === 'CI' || name === 'CONTINUOUS_INTEGRATION' || name.startsWith('CI_')) delete process.env[name];
      // Chalk ignores NO_COLOR (and --no-color here); it heeds FORCE_COLOR=0. The current screen's
      // tab stays marked by its brackets.
      if (ctx.env.NO_COLOR || globals(cmd).color === false) process.env.FORCE_COLOR = '0';
      const { runTui } = await import('../../tui/run.js'); // React and Ink load only here
      await runTui(new WfxClient(connection), connection.url);
    });
}
