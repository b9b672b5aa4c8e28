import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { Option, type Command } from 'commander';
import type { WfxClient } from '../../client/client.js';
import { STATE_NAMES } from '../../client/describe.js';
import {
  BULK_OUTCOMES,
  BULK_SAMPLE_MAX,
  BULK_STATES,
  type BulkOperationName,
  type BulkOutcome,
  type BulkRequest,
  type BulkState,
  type BulkView,
} from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { clientFor } from '../api.js';
import { executionIdOf } from '../resolve.js';
import { count, finishedText, ProgressView, progressText } from '../bulk-progress.js';
import { globals, printJson, type CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { table } from '../format.js';
import { wholeNumber } from '../options.js';
import { Spinner } from '../spinner.js';
import { addSelectionOptions, describeQuery, hasSelection, queryOf, type SelectionOptions } from './instances-query.js';

/** How often a followed operation is read again. */
const POLL_MS = 250;

/** The flags of a command that runs an operation over a query (`wfx instances cancel --query ...`). */
export interface BulkFlags extends SelectionOptions {
  readonly query?: boolean;
  readonly dryRun?: boolean;
  readonly sample: number;
  readonly yes?: boolean;
  readonly detach?: boolean;
}

/**
 * Adds `--query` with the selection flags, `--dry-run`, `--sample`, `--yes` and `--detach` to a
 * command that acts on one execution by id, so that it acts on a query's executions instead
 * (`wfx instances cancel --query --flow F --state running`).
 */
export function addBulkOptions(command: Command): Command {
  command.option('--query', 'act on every execution the selection flags select (a bulk operation), not on one id');
  return addSelectionOptions(command)
    .option('--dry-run', 'with --query: count the selection and show a sample, changing nothing')
    .option(
      '--sample <n>',
      `with --dry-run: how many to show (at most ${BULK_SAMPLE_MAX})`,
      wholeNumber(1, BULK_SAMPLE_MAX),
      10,
    )
    .option('--yes', 'with --query: do not ask for confirmation (needed without a terminal)')
    .option('--detach', 'with --query: start the operation and print its id, without following it');
}

/**
 * Whether the command acts on a query (`--query`): then `id` must be absent. Throws USAGE_ERROR
 * for an id with --query, selection flags without it, or neither.
 */
export function isBulk(id: string | undefined, opts: BulkFlags): boolean {
  if (opts.query === true) {
    if (id !== undefined) throw new WfxError('USAGE_ERROR', 'give an execution id or --query, not both');
    return true;
  }
  if (hasSelection(opts) || opts.dryRun === true || opts.detach === true)
    throw new WfxError('USAGE_ERROR', 'the selection flags, --dry-run and --detach go with --query');
  if (id === undefined) throw new WfxError('USAGE_ERROR', 'give an execution id, or --query with selection flags');
  return false;
}

/**
 * Runs `operation` (with `params`) over the executions the flags select: a dry run; or, once
 * confirmed (a terminal's answer, or --yes), the operation created and followed with a progress
 * bar on a terminal (plain lines otherwise) until it ends, or its id printed with --detach. The
 * exit code: 0 once completed, 3 cancelled, 1 failed.
 */
export async function runBulk(
  ctx: CliContext,
  cmd: Command,
  operation: BulkOperationName,
  params: Record<string, unknown> | undefined,
  opts: BulkFlags,
): Promise<void> {
  const client = await clientFor(ctx, cmd);
  const json = globals(cmd).json === true;
  const request = { operation, query: queryOf(opts), ...(params !== undefined && { params }) } as BulkRequest;
  if (opts.dryRun === true) {
    const dry = await client.bulk.dryRun({ ...request, sample: opts.sample });
    if (json) return printJson(ctx, dry);
    const over =
      dry.count > dry.maxExecutions ? ` (more than the ${count(dry.maxExecutions)} one operation may take)` : '';
    ctx.stdout.write(`${operation} would select ${count(dry.count)} execution${dry.count === 1 ? '' : 's'}${over}\n`);
    if (dry.sample.length > 0)
      ctx.stdout.write(
        table(
          ['ID', 'FLOW', 'VERSION', 'STATE', 'STARTED'],
          dry.sample.map((i) => [
            i.processInstanceId,
            i.processName,
            i.processVersion,
            STATE_NAMES[i.stateCd] ?? '',
            i.startTime,
          ]),
        ),
      );
    if (dry.refusedCount !== undefined && dry.refusedCount > 0) {
      ctx.stdout.write(`${count(dry.refusedCount)} of them cannot ${operation} now (skipped if run):\n`);
      ctx.stdout.write(
        table(
          ['ID', 'CODE', 'WHY'],
          (dry.refused ?? []).map((r) => [r.processInstanceId, r.code, r.message]),
        ),
      );
    }
    return;
  }
  if (opts.yes !== true) await confirm(ctx, client, request);
  const created = await client.bulk.create(request);
  if (opts.detach === true) {
    if (json) return printJson(ctx, created);
    ctx.stdout.write(
      `${created.bulkId}\nbulk ${operation} started over ${count(created.total)} executions; follow it with wfx instances bulk follow ${created.bulkId}\n`,
    );
    return;
  }
  await follow(ctx, client, created, json);
}

/**
 * `wfx instances cancel ID --tree`: a bulk cancel of the tree of top-level execution `id` (its
 * unique prefix), followed until it ends, as `runBulk` does. No confirmation: the tree is named.
 * USAGE_ERROR for an execution started under another (the hint names its root).
 */
export async function cancelTree(ctx: CliContext, cmd: Command, id: string): Promise<void> {
  const client = await clientFor(ctx, cmd);
  const rootId = await executionIdOf(client, id);
  const inst = await client.instances.get(rootId);
  if (inst.rootId !== undefined)
    throw new WfxError(
      'USAGE_ERROR',
      `${rootId} runs under ${inst.rootId}: --tree cancels a whole tree, from its top-level execution (wfx instances cancel ${inst.rootId} --tree)`,
    );
  const created = await client.bulk.create({ operation: 'cancel', query: { rootId, state: 'RUNNING' } });
  await follow(ctx, client, created, globals(cmd).json === true);
}

/** Asks on the terminal whether to go on (after a dry run's count); USAGE_ERROR without a terminal. */
async function confirm(ctx: CliContext, client: WfxClient, request: BulkRequest): Promise<void> {
  if (ctx.stdin.isTTY !== true)
    throw new WfxError(
      'USAGE_ERROR',
      'a bulk operation asks for confirmation on a terminal: pass --yes to run it without',
    );
  const dry = await client.bulk.dryRun({ ...request, sample: 1 });
  const rl = createInterface({ input: ctx.stdin, output: ctx.stderr, terminal: false });
  try {
    ctx.stderr.write(
      `${request.operation} ${count(dry.count)} execution${dry.count === 1 ? '' : 's'} (${describeQuery(request.query)})? [y/N] `,
    );
    const answer = await new Promise<string>((resolve) => {
      rl.once('line', resolve);
      rl.once('close', () => resolve(''));
    });
    if (!/^y(es)?$/i.test(answer.trim())) throw new WfxError('USAGE_ERROR', 'not confirmed: nothing was done');
  } finally {
    rl.close();
  }
}

/**
 * Follows operation `v` until it ends: a bar on a terminal's stderr, plain lines otherwise, then
 * the closing line on stdout (--json: the operation as it ended). Sets the exit code.
 */
async function follow(ctx: CliContext, client: WfxClient, v: BulkView, json: boolean): Promise<void> {
  const bar = Spinner.allowed(ctx, json);
  const view = new ProgressView(ctx.stderr, bar);
  if (!json)
    ctx.stderr.write(`following bulk ${v.operation} ${v.bulkId} (Ctrl-C stops following; the operation goes on)\n`);
  let current = v;
  for (;;) {
    if (!json || bar) view.show(current);
    if (current.state !== 'RUNNING') break;
    await delay(POLL_MS);
    current = await client.bulk.get(v.bulkId);
  }
  view.end();
  ctx.exitCode = current.state === 'COMPLETED' ? EXIT.OK : current.state === 'CANCELLED' ? EXIT.CANCELLED : EXIT.FAILED;
  if (json) return printJson(ctx, current);
  ctx.stdout.write(`${finishedText(current)}\n`);
}

/** `wfx instances bulk list|show|follow|cancel`: the bulk operations and their results. */
export function registerBulk(instances: Command, ctx: CliContext): void {
  const bulk = instances
    .command('bulk')
    .description('bulk operations (made by `wfx instances cancel --query ...`): list, show, follow, cancel');

  bulk
    .command('list')
    .description('bulk operations, newest first')
    .addHelpText('after', '\nExample:\n  $ wfx instances bulk list --state running')
    .addOption(
      new Option('--state <state>', 'only those in this state').choices(BULK_STATES.map((s) => s.toLowerCase())),
    )
    .action(async (opts: { state?: string }, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const page = await client.bulk.list({
        ...(opts.state !== undefined && { state: opts.state.toUpperCase() as BulkState }),
        limit: 200,
      });
      if (globals(cmd).json) return printJson(ctx, page.items);
      ctx.stdout.write(
        table(
          ['ID', 'OPERATION', 'STATE', 'PROGRESS', 'CREATED', 'BY'],
          page.items.map((b) => [b.bulkId, b.operation, b.state.toLowerCase(), progressText(b), b.createdAt, b.by]),
        ),
      );
    });

  bulk
    .command('show')
    .description('one bulk operation: its query, its progress, and its results so far')
    .addHelpText(
      'after',
      '\nExample:\n  $ wfx instances bulk show 0193a5c2-5d1e-7c3a-9b1f-2a3b4c5d6e7f --outcome skipped',
    )
    .argument('<bulkId>')
    .addOption(
      new Option('--outcome <outcome>', 'only results of this outcome').choices(
        BULK_OUTCOMES.map((o) => o.toLowerCase()),
      ),
    )
    .option('--limit <n>', 'at most this many results', wholeNumber(1, 1000), 20)
    .action(async (bulkId: string, opts: { outcome?: string; limit: number }, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const v = await client.bulk.get(bulkId);
      const results = await client.bulk.results(bulkId, {
        ...(opts.outcome !== undefined && { outcome: opts.outcome.toUpperCase() as BulkOutcome }),
        limit: opts.limit,
      });
      if (globals(cmd).json) return printJson(ctx, { ...v, results: results.items });
      ctx.stdout.write(
        `${v.bulkId}  ${v.operation}  ${v.state.toLowerCase()}\n` +
          `query: ${describeQuery(v.query)}${v.params ? `, params ${JSON.stringify(v.params)}` : ''}\n` +
          `created ${v.createdAt} by ${v.by}${v.finishedAt ? `, ended ${v.finishedAt}` : ''}${v.cancelledBy ? ` (cancelled by ${v.cancelledBy})` : ''}\n` +
          `${progressText(v)}\n\n` +
          table(
            ['EXECUTION', 'OUTCOME', 'CODE'],
            results.items.map((r) => [r.processInstanceId, r.outcome.toLowerCase(), r.code ?? '']),
          ) +
          (results.nextCursor ? '… more (--limit, or --json and the API for every result)\n' : ''),
      );
    });

  bulk
    .command('follow')
    .description('follow a bulk operation until it ends (a progress bar on a terminal)')
    .addHelpText('after', '\nExample:\n  $ wfx instances bulk follow 0193a5c2-5d1e-7c3a-9b1f-2a3b4c5d6e7f')
    .argument('<bulkId>')
    .action(async (bulkId: string, _opts: unknown, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      await follow(ctx, client, await client.bulk.get(bulkId), globals(cmd).json === true);
    });

  bulk
    .command('cancel')
    .description('cancel a running bulk operation: no chunk starts after this; what was done stays done')
    .addHelpText('after', '\nExample:\n  $ wfx instances bulk cancel 0193a5c2-5d1e-7c3a-9b1f-2a3b4c5d6e7f')
    .argument('<bulkId>')
    .action(async (bulkId: string, _opts: unknown, cmd: Command) => {
      const v = await (await clientFor(ctx, cmd)).bulk.cancel(bulkId);
      if (globals(cmd).json) return printJson(ctx, v);
      ctx.stdout.write(`${finishedText(v)}\n`);
    });
}
