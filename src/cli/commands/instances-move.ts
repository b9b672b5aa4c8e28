import type { Command } from 'commander';
import type { MoveProblem, Moved } from '../../shared/api/index.js';
import { isWfxError } from '../../shared/errors.js';
import { clientFor } from '../api.js';
import { executionIdOf } from '../resolve.js';
import { globals, printJson, type CliContext } from '../context.js';
import { exitCodeFor } from '../exit-codes.js';
import { table } from '../format.js';
import { WfxError } from '../../shared/errors.js';
import { addBulkOptions, runBulk, type BulkFlags } from './instances-bulk.js';

interface MoveOptions extends BulkFlags {
  readonly to: string;
}

/** `wfx instances move ID --to VERSION [--dry-run]`, under `instances`. */
export function registerInstancesMove(instances: Command, ctx: CliContext): void {
  const move = instances
    .command('move')
    .description('move a running execution to another published version of its flow, or every one a query selects')
    .argument('[id]', 'the processInstanceId (or a unique prefix of it)')
    .requiredOption('--to <version>', 'the version to move it to');
  // --dry-run: a single execution checked, or (with --query) the selection counted and checked.
  addBulkOptions(move)
    .addHelpText(
      'after',
      '\nA node the execution is at must be in that version with the same type (docs/flows.md).\n' +
        '\nExamples:\n  $ wfx instances move 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --to 2 --dry-run\n' +
        '  $ wfx instances move 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --to 2\n' +
        '  $ wfx instances move --query --flow 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --version 1 --state running --to 2 --dry-run',
    )
    .action(async (id: string | undefined, opts: MoveOptions, cmd: Command) => {
      if (opts.query === true) {
        if (id !== undefined) throw new WfxError('USAGE_ERROR', 'give an execution id or --query, not both');
        return runBulk(ctx, cmd, 'move', { version: opts.to }, opts);
      }
      if (id === undefined) throw new WfxError('USAGE_ERROR', 'give an execution id, or --query with selection flags');
      const client = await clientFor(ctx, cmd);
      id = await executionIdOf(client, id);
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
