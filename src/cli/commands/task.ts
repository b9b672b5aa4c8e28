import type { Command } from 'commander';
import type { WfxClient } from '../../client/client.js';
import type { InstanceView } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { clientFor, collect, dataOf } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';
import { wholeNumber } from '../options.js';
import { executionIdOf, treeRoot, type PickExecution } from '../resolve.js';
import { completeLine, fieldsBrief, formEntries, optionsText, type TaskForm } from '../task-form.js';

/** The most tasks one GET /process/tasks page holds (the API's cap). */
const TASK_LIST_MAX = 1000;

/** A waiting input node or user task of one execution, as `wfx task show` prints it. */
interface Waiting extends TaskForm {
  readonly nodeName: string;
  readonly nodeType: string;
  readonly assignee: string | null;
  /** Who claimed it (`key:<id>`, `oidc:<subject>`), when someone did. */
  readonly claimedBy?: string;
  readonly dueAt: string | null;
  readonly waitingSince: string;
}

/** The input nodes and user tasks execution `inst` waits at. */
function waitingTasks(inst: InstanceView): Waiting[] {
  return inst.nodes.flatMap((n) =>
    n.statusCd === 1 && n.wait?.kind === 'input'
      ? [
          {
            processInstanceId: inst.processInstanceId,
            nodeId: n.nodeId,
            nodeName: n.nodeName,
            nodeType: n.nodeType,
            inputType: n.wait.inputType,
            formTitle: n.wait.formTitle,
            options: n.wait.options,
            fields: n.wait.fields,
            assignee: n.wait.assignee,
            ...(n.claimedBy !== undefined && { claimedBy: n.claimedBy }),
            dueAt: n.wait.dueAt,
            waitingSince: n.startTime,
          },
        ]
      : [],
  );
}

/**
 * Of several executions an id prefix begins, the one a task command means: the only one waiting
 * for input (read whole: a summary does not say what a node waits for), else a tree's root.
 */
function waitingForInput(client: WfxClient): PickExecution {
  return async (found) => {
    const waiting: string[] = [];
    for (const i of found)
      if (i.state === 'RUNNING' && i.waitingNodeIds.length > 0)
        if (waitingTasks(await client.instances.get(i.processInstanceId)).length > 0) waiting.push(i.processInstanceId);
    return waiting.length === 1 ? waiting[0]! : treeRoot(found);
  };
}

/**
 * The tasks of execution `arg` (an id or a unique prefix) at `nodeId`, or every one when it is
 * not given. Throws INSTANCE_NOT_FOUND, AMBIGUOUS_ID, NODE_NOT_WAITING (none waits there).
 */
async function tasksOf(client: WfxClient, arg: string, nodeId: string | undefined): Promise<Waiting[]> {
  const id = await executionIdOf(client, arg, waitingForInput(client));
  const all = waitingTasks(await client.instances.get(id));
  const tasks = nodeId === undefined ? all : all.filter((t) => t.nodeId === nodeId);
  if (tasks.length === 0)
    throw new WfxError(
      'NODE_NOT_WAITING',
      nodeId === undefined
        ? `no node of ${id} waits for input`
        : `${nodeId} of ${id} waits for no input${all.length > 0 ? ` (waiting: ${all.map((t) => t.nodeId).join(', ')})` : ''}`,
    );
  return tasks;
}

/** One task as `wfx task show` prints it: title, its answer's fields, a line to complete it. */
function showText(t: Waiting, today: string): string {
  const head = `${t.processInstanceId} ${t.nodeId} (${t.nodeType}, ${t.inputType})${t.formTitle ? `: ${t.formTitle}` : ''}\n`;
  const meta = [
    `waiting since ${t.waitingSince}`,
    ...(t.dueAt ? [`due ${t.dueAt}`] : []),
    ...(t.assignee ? [`assignee ${t.assignee}`] : []),
    ...(t.claimedBy ? [`claimed by ${t.claimedBy}`] : []),
  ].join(', ');
  const rows = formEntries(t).map((e) => [
    e.name,
    e.type,
    e.required ? 'yes' : 'no',
    e.default === undefined ? '-' : JSON.stringify(e.default),
    optionsText(e.options),
    e.label ?? '',
  ]);
  return `${head}${meta}\n\n${table(['FIELD', 'TYPE', 'REQUIRED', 'DEFAULT', 'OPTIONS', 'LABEL'], rows)}\ncomplete it (edit the values):\n  ${completeLine(t, today)}\n`;
}

/**
 * The task a command names: execution `id` (or a prefix) at `nodeId`, or, without it, the one
 * node it waits at for input. Throws AMBIGUOUS_ID (several wait: name one), NODE_NOT_WAITING.
 */
async function taskNamed(
  client: WfxClient,
  id: string,
  nodeId: string | undefined,
): Promise<{ id: string; nodeId: string }> {
  if (nodeId !== undefined) return { id: await executionIdOf(client, id, waitingForInput(client)), nodeId };
  const tasks = await tasksOf(client, id, undefined);
  if (tasks.length > 1)
    throw new WfxError(
      'AMBIGUOUS_ID',
      `${tasks.length} nodes of ${tasks[0]!.processInstanceId} wait for input: name one (${tasks.map((t) => t.nodeId).join(', ')})`,
      { details: { candidates: tasks.map((t) => t.nodeId) } },
    );
  return { id: tasks[0]!.processInstanceId, nodeId: tasks[0]!.nodeId };
}

const TAKE_OVER = 'act on a task another person claimed (needs WORKFLOW_PUBLISH)';

/** `wfx task list|show|complete|cancel|claim|unclaim`. */
export function registerTask(program: Command, ctx: CliContext): void {
  const task = program.command('task').description('list and answer executions waiting at an input node or user task');
  task
    .command('list')
    .description(
      "input nodes and user tasks waiting for an answer, oldest first, with when each is due (its timeout, a timer on it) and what it wants (FIELDS: *, required); an agent's tool task names the agent",
    )
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
      // CLAIMED only when someone claimed a task, as AGENT.
      const claimed = res.items.some((i) => i.claim !== null);
      ctx.stdout.write(
        table(
          [
            'ID',
            'NODE',
            'INPUT',
            'FLOW',
            'WAITING SINCE',
            'DUE',
            ...(claimed ? ['CLAIMED BY'] : []),
            ...(agents ? ['AGENT'] : []),
            'FIELDS',
            'TITLE',
          ],
          res.items.map((i) => [
            i.processInstanceId,
            i.nodeId,
            i.inputType,
            `${i.processName} v${i.processVersion}`,
            i.waitingSince,
            i.dueAt ?? '-',
            ...(claimed ? [i.claim?.name ?? ''] : []),
            ...(agents ? [i.agent ? `${i.agent.nodeName} (${i.agent.tool})` : ''] : []),
            fieldsBrief(i),
            i.formTitle ?? '',
          ]),
        ),
      );
    });

  task
    .command('show')
    .description(
      "what an execution's waiting task wants: its title, each field's type, options, required, default and label, and a `task complete` line to paste",
    )
    .argument('<id>', 'the processInstanceId (or a unique prefix of it)')
    .argument('[nodeId]', 'the waiting node (default: every one the execution waits at)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx task show 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f\n  $ wfx task show 01a1fdd5 ask --json',
    )
    .action(async (id: string, nodeId: string | undefined, _opts: unknown, cmd: Command) => {
      const tasks = await tasksOf(await clientFor(ctx, cmd), id, nodeId);
      const today = new Date().toISOString().slice(0, 10);
      if (globals(cmd).json)
        return printJson(
          ctx,
          tasks.map((t) => ({ ...t, complete: completeLine(t, today) })),
        );
      ctx.stdout.write(tasks.map((t) => showText(t, today)).join('\n'));
    });

  for (const action of ['complete', 'cancel'] as const) {
    task
      .command(action)
      .description(
        action === 'complete'
          ? 'submit the input (COMPLETE); data that does not fit is refused, the node keeps waiting'
          : 'cancel the task (its errorFlow, else the execution is cancelled)',
      )
      .argument('<id>', 'the processInstanceId (or a unique prefix of it)')
      .argument('[nodeId]', 'the waiting node (default: the one the execution waits at for input)')
      .option('--data <json>', 'the input: a JSON object, or @file', '{}')
      .option('--set <key=value>', 'one field (typed; dotted keys nest); repeatable', collect, [])
      .option('--take-over', TAKE_OVER)
      .addHelpText(
        'after',
        `\nExample:\n  $ wfx task ${action} 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f ask${action === 'complete' ? ` --data '{"approve":true}'` : ''}`,
      )
      .action(
        async (
          id: string,
          nodeId: string | undefined,
          opts: { data: string; set: string[]; takeOver?: boolean },
          cmd: Command,
        ) => {
          const client = await clientFor(ctx, cmd);
          const data = await dataOf(ctx, opts);
          const named = await taskNamed(client, id, nodeId);
          const res = await client.tasks.answer({
            processInstanceId: named.id,
            nodeId: named.nodeId,
            action: action === 'complete' ? 'COMPLETE' : 'CANCEL',
            data,
            ...(opts.takeOver === true && { takeOver: true }),
          });
          if (globals(cmd).json) printJson(ctx, res);
          else ctx.stdout.write(`${named.id} resumed at ${named.nodeId}\n`);
        },
      );
  }

  for (const action of ['claim', 'unclaim'] as const) {
    task
      .command(action)
      .description(
        action === 'claim'
          ? 'take the task: until it is answered or unclaimed only you answer it (the others are refused TASK_CLAIMED)'
          : 'give a task you claimed back: anyone may answer or claim it again',
      )
      .argument('<id>', 'the processInstanceId (or a unique prefix of it)')
      .argument('[nodeId]', 'the waiting node (default: the one the execution waits at for input)')
      .option('--take-over', TAKE_OVER)
      .addHelpText('after', `\nExample:\n  $ wfx task ${action} 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f ask`)
      .action(async (id: string, nodeId: string | undefined, opts: { takeOver?: boolean }, cmd: Command) => {
        const client = await clientFor(ctx, cmd);
        const named = await taskNamed(client, id, nodeId);
        const res = await client.tasks.answer({
          processInstanceId: named.id,
          nodeId: named.nodeId,
          action: action === 'claim' ? 'CLAIM' : 'UNCLAIM',
          ...(opts.takeOver === true && { takeOver: true }),
        });
        if (globals(cmd).json) printJson(ctx, res);
        else ctx.stdout.write(`${named.id} ${named.nodeId} ${action === 'claim' ? 'claimed' : 'unclaimed'}\n`);
      });
  }
}
