import type { Command } from 'commander';
import type { MoveProblem, Moved } from '../../shared/api/index.js';
import { isWfxError } from '../../shared/errors.js';
import { clientFor } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { exitCodeFor } from '../exit-codes.js';
import { table } from '../format.js';

interface MoveOptions {
  readonly to: string;
  readonly dryRun?: boolean;
}

/** `wfx instances move ID --to VERSION [--dry-run]`, under `instances`. */
export function registerInstancesMove(instances: Command, ctx: CliContext): void {
  instances
    .command('move')
    .description('move a running execution to another published version of its flow')
    .argument('<id>', 'the processInstanceId')
    .requiredOption('--to <version>', 'the version to move it to')
    .option('--dry-run', 'only check that it can move; nothing changes')
    .addHelpText(
      'after',
      '\nA node the execution is at must be in that version with the same type (docs/flows.md).\n' +
        '\nExamples:\n  $ wfx instances move 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --to 2 --dry-run\n' +
        '  $ wfx instances move 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --to 2',
    )
    .action(async (id: string, opts: MoveOptions, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const json = globals(cmd).json === true;
      let res: Moved;
      try {
        res = await client.instances.move(id, { version: opts.to, ...(opts.dryRun && { dryRun: true }) });
      } catch (err) {
        if (!isWfxError(err, 'INSTANCE_NOT_MOVABLE')) throw err;
        const problems = (err.details as { problems?: MoveProblem[] } | undefined)?.problems ?? [];
        if (json) printJson(ctx, { error: err.code, message: err.message, problems });
        ctx.stderr.write(`${err.code}: ${err.message}\n${problemsText(id, problems)}`);
        if (err.hint) ctx.stderr.write(`hint: ${err.hint}\n`);
        ctx.exitCode = exitCodeFor(err.code);
        return;
      }
      if (json) return printJson(ctx, res);
      ctx.stdout.write(`${movedText(res)}\n`);
    });
}

/** What a move did, in a line. Pure. */
export function movedText(res: Moved): string {
  const { processInstanceId: id, fromVersion: from, toVersion: to } = res;
  const n = res.children.length;
  const children = n === 0 ? '' : `, with ${n} child execution${n === 1 ? '' : 's'} running its body`;
  switch (res.status) {
    case 'unchanged':
      return `${id} runs version ${to} already: nothing to move`;
    case 'movable':
      return `${id} can move from version ${from} to version ${to}${children} (dry run: nothing changed)`;
    case 'moved':
      return `${id} moved from version ${from} to version ${to}${children}`;
  }
}

/**
 * Why an execution cannot move, a node a line (NODE, PROBLEM, WHY), with the child execution
 * and body a node is in when it is not in execution `id` itself. Pure.
 */
export function problemsText(id: string, problems: readonly MoveProblem[]): string {
  if (problems.length === 0) return '';
  const where = (p: MoveProblem): string =>
    p.processInstanceId === id ? p.nodeId : `${[...(p.scope ?? []), p.nodeId].join('/')} (in ${p.processInstanceId})`;
  return table(
    ['NODE', 'PROBLEM', 'WHY'],
    problems.map((p) => [where(p), p.code, p.reason]),
  );
}
