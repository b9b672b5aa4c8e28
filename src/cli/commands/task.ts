import type { Command } from 'commander';
import { clientFor, collect, dataOf } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';
import { wholeNumber } from '../options.js';

/** The most tasks one GET /process/tasks page holds (the API's cap). */
const TASK_LIST_MAX = 1000;

/** `wfx task list|complete|cancel`. */
export function registerTask(program: Command, ctx: CliContext): void {
  const task = program.command('task').description('list and answer executions waiting at an input node or user task');
  task
    .command('list')
    .description("input nodes and user tasks waiting for an answer, oldest first; an agent's tool task names the agent")
    .option('--flow <processId>', "only this flow's")
    .option('--limit <n>', 'at most this many', wholeNumber(1, TASK_LIST_MAX), 100)
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx task list\n  $ wfx task list --flow 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --json',
    )
    .action(async (opts: { flow?: string; limit: number }, cmd: Command) => {
      const res = await (await clientFor(ctx, cmd)).tasks.list({ limit: opts.limit, processId: opts.flow });
      // The page was cut: say so on stderr (stdout stays the list, for scripts).
      if (res.nextCursor !== null && res.nextCursor !== undefined) {
        ctx.stderr.write(
          opts.limit < TASK_LIST_MAX
            ? `more tasks wait: raise --limit (at most ${TASK_LIST_MAX})\n`
            : `more than ${TASK_LIST_MAX} tasks wait: narrow the list with --flow\n`,
        );
      }
      if (globals(cmd).json) return printJson(ctx, res.items);
      if (res.items.length === 0) return void ctx.stdout.write('no task waits\n');
      // AGENT only when a task waits for one: most lists have none, and the table stays narrow.
      const agents = res.items.some((i) => i.agent);
      ctx.stdout.write(
        table(
          ['ID', 'NODE', 'INPUT', 'FLOW', 'WAITING SINCE', ...(agents ? ['AGENT'] : []), 'TITLE'],
          res.items.map((i) => [
            i.processInstanceId,
            i.nodeId,
            i.inputType,
            `${i.processName} v${i.processVersion}`,
            i.waitingSince,
            ...(agents ? [i.agent ? `${i.agent.nodeName} (${i.agent.tool})` : ''] : []),
            i.formTitle ?? '',
          ]),
        ),
      );
    });

  for (const action of ['complete', 'cancel'] as const) {
    task
      .command(action)
      .description(
        action === 'complete'
          ? 'submit the input (COMPLETE); data that does not fit is refused, the node keeps waiting'
          : 'cancel the task (its errorFlow, else the execution is cancelled)',
      )
      .argument('<id>', 'the processInstanceId')
      .argument('<nodeId>', 'the waiting node')
      .option('--data <json>', 'the input: a JSON object, or @file', '{}')
      .option('--set <key=value>', 'one field (typed; dotted keys nest); repeatable', collect, [])
      .addHelpText(
        'after',
        `\nExample:\n  $ wfx task ${action} 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f ask${action === 'complete' ? ` --data '{"approve":true}'` : ''}`,
      )
      .action(async (id: string, nodeId: string, opts: { data: string; set: string[] }, cmd: Command) => {
        const res = await (
          await clientFor(ctx, cmd)
        ).tasks.answer({
          processInstanceId: id,
          nodeId,
          action: action === 'complete' ? 'COMPLETE' : 'CANCEL',
          data: await dataOf(ctx, opts),
        });
        if (globals(cmd).json) printJson(ctx, res);
        else ctx.stdout.write(`${id} resumed at ${nodeId}\n`);
      });
  }
}
