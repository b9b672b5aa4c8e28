import type { Command } from 'commander';
import { childTree, CLI_TREE_LIMITS, type ChildGroup } from '../../client/child-tree.js';
import { STATE_NAMES, STATUS_NAMES, waitingFor } from '../../client/describe.js';
import { formatTranscriptLine, nodeOpen, transcriptLines, transcriptSummary } from '../../client/transcript.js';
import {
  EXECUTION_STATES,
  type AgentState,
  type InstanceSummary,
  type InstanceView,
  type NodeView,
} from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { clientFor } from '../api.js';
import { executionIdOf, processIdOf } from '../resolve.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';
import { wholeNumber } from '../options.js';
import { registerRecovery } from './instances-recovery.js';
import { registerInstancesMove } from './instances-move.js';
import { registerFailures } from './instances-failures.js';
import { addBulkOptions, cancelTree, isBulk, registerBulk, runBulk, type BulkFlags } from './instances-bulk.js';
import { addExecutionFilters, hasSelection, type SelectionOptions } from './instances-query.js';

/** The most `wfx instances list --limit` takes, and the executions it asks for at a time (GET /process/instances' most). */
const LIST_MAX = 1000;
const PAGE = 200;

interface ListOptions extends Pick<
  SelectionOptions,
  'state' | 'env' | 'errorCode' | 'failedNode' | 'correlationKey' | 'waiting' | 'where' | 'all' | 'root'
> {
  readonly limit: number;
}

/** Where a listed execution waits and for what (`person at ask`, `timer at nap, event at paid`), or ''. Pure. */
function waitsText(i: InstanceSummary): string {
  if (i.queuePosition !== undefined) return '';
  return (i.waits ?? []).map((w) => `${w.for} at ${w.nodeId}`).join(', ');
}

/** Search attributes as a person reads them (`orderId=A-1002 customer=Ada`), or ''. Pure. */
function searchText(search: Readonly<Record<string, string>> | undefined): string {
  return Object.entries(search ?? {})
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
}

/** `wfx instances list|get|cancel|retry|replay|move|failures`. */
export function registerInstances(program: Command, ctx: CliContext): void {
  const instances = program.command('instances').description('list, inspect, cancel, retry and replay executions');

  addExecutionFilters(
    instances
      .command('list')
      .description('executions, newest first (of one flow, or of every flow)')
      .argument('[flow]', 'only this flow (its processId or its name)'),
    '<nodeId>',
  )
    .option('--limit <n>', 'at most this many', wholeNumber(1, LIST_MAX), 50)
    .option('--all', "child executions too (loop iterations, subprocesses, agents' tools); default: top-level only")
    .option(
      '--root <id>',
      'only the tree of this top-level execution: it and everything started under it, ended ones too',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx instances list\n  $ wfx instances list 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --state failed --json\n  $ wfx instances list --error-code HTTP_503 --env PRODUCTION\n  $ wfx instances list --waiting person\n  $ wfx instances list --where orderId=A-1002',
    )
    .action(async (processId: string | undefined, opts: ListOptions, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const query = {
        processId: processId === undefined ? undefined : await processIdOf(client, processId),
        state: opts.state && EXECUTION_STATES[STATE_NAMES.indexOf(opts.state)],
        environment: opts.env,
        errorCode: opts.errorCode,
        failedNode: opts.failedNode,
        correlationKey: opts.correlationKey,
        waiting: opts.waiting,
        ...(opts.where !== undefined && { where: [...opts.where] }),
        ...(opts.all && { children: true }),
        ...(opts.root !== undefined && { rootId: await executionIdOf(client, opts.root) }),
      };
      const page: InstanceSummary[] = [];
      for (let cursor: string | undefined; page.length < opts.limit;) {
        const got = await client.instances.search({
          ...query,
          limit: Math.min(PAGE, opts.limit - page.length),
          cursor,
        });
        page.push(...got.items);
        if (got.nextCursor === null) break;
        cursor = got.nextCursor;
      }
      if (globals(cmd).json) return printJson(ctx, page);
      // Where running ones wait, when any does: a run waiting for a person is not one working.
      const waiting = page.some((i) => i.waits !== undefined);
      const searched = page.some((i) => i.search !== undefined);
      ctx.stdout.write(
        table(
          [
            'ID',
            'FLOW',
            'VERSION',
            'STATE',
            ...(waiting ? ['WAITING'] : []),
            'STARTED',
            'CHILDREN',
            'CORRELATION KEY',
            ...(searched ? ['SEARCH'] : []),
          ],
          page.map((i) => [
            // With --all a child says whose it is.
            i.parentInstanceId
              ? `${i.processInstanceId} (child of …${i.parentInstanceId.slice(-12)})`
              : i.processInstanceId,
            i.processName,
            i.processVersion,
            i.queuePosition === undefined
              ? (STATE_NAMES[i.stateCd] ?? String(i.stateCd))
              : `queued #${i.queuePosition}`,
            ...(waiting ? [waitsText(i)] : []),
            i.startTime,
            i.childCount > 0 ? String(i.childCount) : '',
            i.correlationKey ?? '',
            ...(searched ? [searchText(i.search)] : []),
          ]),
        ),
      );
    });

  instances
    .command('get')
    .description("one execution: state, nodes, each agent's conversation, variables, output, error")
    .addHelpText('after', '\nExample:\n  $ wfx instances get 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f')
    .argument('<id>', 'the processInstanceId (or a unique prefix of it)')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const inst = await client.instances.get(await executionIdOf(client, id));
      if (globals(cmd).json) return printJson(ctx, inst);
      ctx.stdout.write(
        `${inst.processInstanceId}  ${inst.processName} v${inst.processVersion}  ${inst.queuePosition === undefined ? STATE_NAMES[inst.stateCd] : `queued #${inst.queuePosition} (the flow's concurrency limit)`}\n` +
          `started ${inst.startTime}${inst.endTime ? `, ended ${inst.endTime}` : ''}${inst.correlationKey ? `, correlation key ${inst.correlationKey}` : ''}\n` +
          (inst.search ? `search: ${searchText(inst.search)}\n` : '') +
          `console: ${client.instances.consoleUrl(inst.processInstanceId)}\n` +
          (inst.parentInstanceId
            ? `child of ${inst.parentInstanceId}${inst.toolCallId ? `, running its agent's tool call ${inst.toolCallId}` : ''}\n`
            : '') +
          triggeredByLine(inst) +
          (inst.usage
            ? `model usage: ${inst.usage.calls} call${inst.usage.calls === 1 ? '' : 's'}, ${inst.usage.inputTokens} input + ${inst.usage.outputTokens} output tokens\n`
            : '') +
          errorLine(inst) +
          '\n' +
          nodesTable(inst) +
          conversations(inst, terminalWidth(ctx)) +
          childrenText(await childTree(client, inst, CLI_TREE_LIMITS)) +
          `\nvariables: ${JSON.stringify(inst.data, null, 2)}\n` +
          (inst.output ? `output: ${JSON.stringify(inst.output, null, 2)}\n` : ''),
      );
    });

  const cancel = instances
    .command('cancel')
    .description(
      'cancel a running execution, its whole tree (--tree), or every one a query selects (--query: a bulk operation)',
    )
    .option('--tree', 'the execution and everything started under it, even after it ended (a bulk operation)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx instances cancel 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f\n  $ wfx instances cancel 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f --tree\n  $ wfx instances cancel --query --flow 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --state running --dry-run\n  $ wfx instances cancel --query --flow 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --started-before 2026-11-20 --yes',
    )
    .argument('[id]', 'the processInstanceId (or a unique prefix of it)');
  addBulkOptions(cancel).action(async (id: string | undefined, opts: BulkFlags & { tree?: boolean }, cmd: Command) => {
    if (opts.tree === true) {
      if (id === undefined || opts.query === true || hasSelection(opts) || opts.dryRun === true)
        throw new WfxError(
          'USAGE_ERROR',
          "--tree takes the id of a tree's top-level execution, and no selection flags",
        );
      return cancelTree(ctx, cmd, id);
    }
    if (isBulk(id, opts)) return runBulk(ctx, cmd, 'cancel', undefined, opts);
    const client = await clientFor(ctx, cmd);
    id = await executionIdOf(client, id!);
    const res = await client.instances.cancel(id);
    if (globals(cmd).json) printJson(ctx, res);
    else ctx.stdout.write(`${id} cancelled\n`);
  });

  registerBulk(instances, ctx);

  registerRecovery(instances, ctx);
  registerInstancesMove(instances, ctx);
  registerFailures(instances, ctx);
}

/** The ended execution whose execution trigger started this one: its id, flow and end state; '' for none. */
function triggeredByLine(inst: InstanceView): string {
  const by = inst.triggeredBy;
  if (!by) return '';
  const facts = [by.processName ?? by.processId, ...(by.state ? [by.state] : [])];
  return `triggered by ${by.processInstanceId} (${facts.join(', ')})\n`;
}

/** A failed execution's error: its code, the node it failed at and how many times that ran; '' for none. */
function errorLine(inst: InstanceView): string {
  const e = inst.data.error;
  if (!e) return '';
  const runs = e.attempts > 1 ? ` (${e.attempts} attempts)` : '';
  return `failed ${e.code}${e.nodeId === null ? '' : ` at ${e.nodeId}${runs}`}: ${e.message}\n`;
}

/** A line of a drawn tree and the lines under it. */
interface TreeLine {
  readonly text: string;
  readonly under: readonly TreeLine[];
}

/** A node's children as tree lines: how many, the ones left out, then each child with its own. */
function groupLines(g: ChildGroup): TreeLine {
  const more = g.total - g.shown.length;
  return {
    text: `${g.nodeId} (${g.nodeType}): ${g.total} child execution${g.total === 1 ? '' : 's'}`,
    under: [
      ...(more > 0 ? [{ text: `… ${more} more (earlier; --json lists every id)`, under: [] }] : []),
      ...g.shown.map((c): TreeLine => ({
        text:
          c.stateCd === null
            ? `${c.id}  (could not be read)`
            : `${c.id}  ${STATE_NAMES[c.stateCd] ?? c.stateCd}  ${c.processName ?? ''}`.trimEnd(),
        under:
          c.unshown > 0
            ? [{ text: `… ${c.unshown} more below (wfx instances get ${c.id})`, under: [] }]
            : c.groups.map(groupLines),
      })),
    ],
  };
}

/** Draws `lines` as a tree (├─ └─ │), each level indented 3. Pure. */
function drawTree(lines: readonly TreeLine[], indent = ''): string[] {
  return lines.flatMap((l, i) => {
    const last = i === lines.length - 1;
    return [`${indent}${last ? '└─' : '├─'} ${l.text}`, ...drawTree(l.under, `${indent}${last ? '   ' : '│  '}`)];
  });
}

/**
 * The execution's child executions under the node that started each (a loop's iterations, a
 * subprocess, an agent's tools) as a tree, grandchildren under their parent: each child's id,
 * state and flow; bounded as `childTree` reads it, with what was left out counted. '' without any.
 * Pure.
 */
export function childrenText(groups: readonly ChildGroup[]): string {
  if (groups.length === 0) return '';
  return `\nchildren:\n${drawTree(groups.map(groupLines)).join('\n')}\n`;
}

/** Columns the conversations are laid out for: the terminal's (at most 120, for reading), else 100. */
function terminalWidth(ctx: CliContext): number {
  const columns = (ctx.stdout as { columns?: number }).columns;
  return ctx.stdout.isTTY && columns ? Math.min(120, columns) : 100;
}

/** Each callAgent's conversation under its node and status, and a line of its turns, tool calls and tokens; '' without one. */
function conversations(inst: InstanceView, width: number): string {
  return inst.nodes
    .filter((n): n is NodeView & { agent: AgentState } => n.agent !== undefined)
    .map((n) => {
      const who = n.nodeName === n.nodeId ? n.nodeId : `${n.nodeName} (${n.nodeId})`;
      const lines = transcriptLines(n, {
        width,
        textChars: 1500,
        resultChars: 500,
        clipHint: ` (--json has the whole)`,
      });
      return (
        `\nconversation of ${who}, ${STATUS_NAMES[n.statusCd] ?? n.statusCd}\n${transcriptSummary(n.agent, nodeOpen(n))}\n` +
        lines.map((l) => `${formatTranscriptLine(l)}\n`).join('')
      );
    })
    .join('');
}

/** The nodes table; with an ANSWERED BY column (the answerer's actor, never a secret) once a task was answered. */
function nodesTable(inst: InstanceView): string {
  const answered = inst.nodes.some((n) => n.answeredBy !== undefined);
  return table(
    ['NODE', 'TYPE', 'STATUS', 'WAITING FOR', ...(answered ? ['ANSWERED BY'] : [])],
    inst.nodes.map((n) => [
      n.nodeId,
      n.nodeType,
      STATUS_NAMES[n.statusCd] ?? String(n.statusCd),
      waitingFor(n),
      ...(answered ? [n.answeredBy ?? ''] : []),
    ]),
  );
}
