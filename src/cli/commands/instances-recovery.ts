import type { Command } from 'commander';
import type { WfxClient } from '../../client/client.js';
import { clientFor, collect, dataOf } from '../api.js';
import { executionIdOf } from '../resolve.js';
import { globals, printJson, type CliContext } from '../context.js';
import { WfxError } from '../../shared/errors.js';
import { addBulkOptions, isBulk, runBulk, type BulkFlags } from './instances-bulk.js';
import { positive, waitAndReport } from './run.js';

interface RecoveryOptions extends BulkFlags {
  readonly data?: string;
  readonly set?: string[];
  readonly wait?: boolean;
  readonly follow?: boolean;
  readonly timeout?: number;
}

/** `wfx instances retry|replay`: an operator's recovery of an execution (SPEC.md section 10). */
export function registerRecovery(instances: Command, ctx: CliContext): void {
  const retry = withWaitOptions(
    instances
      .command('retry')
      .description(
        'retry a failed execution where it failed (same id, variables and history), or every one a query selects',
      )
      .argument('[id]', 'the processInstanceId of a failed execution (or a unique prefix of it)')
      .option('--set <key=value>', 'set a variable first (typed; dotted keys nest); repeatable', collect, [])
      .option('--data <json>', 'variables to set first: a JSON object, or @file'),
  );
  addBulkOptions(retry)
    .addHelpText(
      'after',
      `
Examples:
  $ wfx instances retry 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f
  $ wfx instances retry 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --set address.zip=10115 --wait
  $ wfx instances retry --query --state failed --error-code HTTP_503 --dry-run`,
    )
    .action(async (id: string | undefined, opts: RecoveryOptions, cmd: Command) => {
      const data = await dataOf(ctx, opts);
      const params = Object.keys(data).length > 0 ? { data } : {};
      if (isBulk(id, opts)) return runBulk(ctx, cmd, 'retry', params, opts);
      const client = await clientFor(ctx, cmd);
      id = await executionIdOf(client, id!);
      const res = await client.instances.retry(id, params);
      await afterwards(ctx, cmd, client, res.processInstanceId, opts, res, `${id} resumed`);
    });

  const replay = withWaitOptions(
    instances
      .command('replay')
      .description('start a new execution of the same flow version at a node, with the variables it had there')
      .argument('[id]', 'the processInstanceId to replay (or a unique prefix of it)')
      .option('--from <node>', 'the node id to start at (the start event: a rerun from the start)')
      .option('--set <key=value>', 'set a variable over those of that moment; repeatable', collect, [])
      .option('--data <json>', 'variables over those of that moment: a JSON object, or @file'),
  );
  addBulkOptions(replay)
    .addHelpText(
      'after',
      `
Examples:
  $ wfx instances replay 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --from charge
  $ wfx instances replay 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --from start --wait --json
  $ wfx instances replay --query --flow 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --state failed --yes`,
    )
    .action(async (id: string | undefined, opts: RecoveryOptions & { from?: string }, cmd: Command) => {
      const data = await dataOf(ctx, opts);
      if (isBulk(id, opts)) {
        if (opts.from !== undefined)
          throw new WfxError(
            'USAGE_ERROR',
            'a replay by --query reruns each execution from its start: leave out --from',
          );
        return runBulk(ctx, cmd, 'replay', Object.keys(data).length > 0 ? { data } : {}, opts);
      }
      if (opts.from === undefined) throw new WfxError('USAGE_ERROR', 'name the node to replay from: --from NODE');
      const client = await clientFor(ctx, cmd);
      id = await executionIdOf(client, id!);
      const res = await client.instances.replay(id, {
        nodeId: opts.from,
        ...(Object.keys(data).length > 0 && { data }),
      });
      const line = `${res.processInstanceId} started (a replay of ${id!} from ${opts.from})`;
      await afterwards(ctx, cmd, client, res.processInstanceId, opts, res, line);
    });
}

function withWaitOptions(cmd: Command): Command {
  return cmd
    .option('--wait', 'wait until it finishes: exit 0 completed, 1 failed, 3 cancelled')
    .option('--follow', 'print its log as it runs (implies --wait)')
    .option('--timeout <seconds>', 'wait (implies --wait) and exit 4 if not finished by then', positive);
}

/** Prints what the call answered, or waits for the execution to finish as `wfx run --wait` does. */
async function afterwards(
  ctx: CliContext,
  cmd: Command,
  client: WfxClient,
  id: string,
  opts: RecoveryOptions,
  answer: object,
  line: string,
): Promise<void> {
  const g = globals(cmd);
  if (!opts.wait && !opts.follow && opts.timeout === undefined) {
    if (g.json) printJson(ctx, answer);
    else {
      ctx.stdout.write(`${line}\n`);
      ctx.stderr.write(`console: ${client.instances.consoleUrl(id)}\n`);
    }
    return;
  }
  if (!g.json) ctx.stderr.write(`${line}\n`);
  await waitAndReport(ctx, cmd, client, id, opts);
}
