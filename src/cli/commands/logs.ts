import type { Command } from 'commander';
import { clientFor } from '../api.js';
import { executionIdOf } from '../resolve.js';
import { globals, useColor, type CliContext } from '../context.js';
import { formatLogLine, type LogEntry } from '../format.js';
import { reportFinished, waitFor } from './run.js';

/** `wfx logs`: an execution's log, or with --follow its entries as they come until it ends. */
export function registerLogs(program: Command, ctx: CliContext): void {
  program
    .command('logs')
    .description('the log of an execution; --follow keeps printing until it finishes')
    .argument('<id>', 'the processInstanceId (or a unique prefix of it)')
    .option('--follow', 'print new entries as they come, until the execution finishes')
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx logs 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f\n  $ wfx logs 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --follow --json',
    )
    .action(async (id: string, opts: { follow?: boolean }, cmd: Command) => {
      const g = globals(cmd);
      const client = await clientFor(ctx, cmd);
      id = await executionIdOf(client, id);
      const color = useColor(ctx, g);
      if (opts.follow) {
        // Ends as `wfx run --follow` does: the state, error and output (--json: the execution, one line).
        const finished = await waitFor(ctx, client, id, { follow: true, json: g.json === true, color });
        if (finished) reportFinished(ctx, finished, { json: g.json === true, follow: true });
        return;
      }
      for await (const ev of client.instances.streamLogs(id, { follow: false })) {
        if (ev.event !== undefined || ev.data === undefined) continue;
        const entry = JSON.parse(ev.data) as LogEntry;
        ctx.stdout.write(
          g.json ? `${JSON.stringify({ id: Number(ev.id), ...entry })}\n` : `${formatLogLine(entry, color)}\n`,
        );
      }
    });
}
