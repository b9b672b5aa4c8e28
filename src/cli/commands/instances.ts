import { Option, type Command } from 'commander';
import { STATE_NAMES, STATUS_NAMES, waitingFor } from '../../client/describe.js';
import { formatTranscriptLine, nodeOpen, transcriptLines, transcriptSummary } from '../../client/transcript.js';
import type { AgentState, InstanceSummary, InstanceView, NodeView } from '../../shared/api/index.js';
import { clientFor } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';

/** `wfx instances list|get|cancel`. */
export function registerInstances(program: Command, ctx: CliContext): void {
  const instances = program.command('instances').description('list, inspect and cancel executions');

  instances
    .command('list')
    .description('executions, newest first (of one flow, or of every flow)')
    .argument('[processId]', 'only this flow')
    .addOption(new Option('--state <state>', 'only executions in this state').choices([...STATE_NAMES]))
    .option('--limit <n>', 'at most this many', (v) => Number(v), 50)
    .option('--all', "child executions too (loop iterations, subprocesses, agents' tools); default: top-level only")
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx instances list\n  $ wfx instances list 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --state failed --json',
    )
    .action(
      async (
        processId: string | undefined,
        opts: { state?: (typeof STATE_NAMES)[number]; limit: number; all?: boolean },
        cmd: Command,
      ) => {
        const client = await clientFor(ctx, cmd);
        const flows = processId
          ? [processId]
          : (await client.flows.startable({ limit: 1000 })).items.map((f) => f.processId);
        const query = {
          limit: opts.limit,
          ...(opts.state && { stateCd: STATE_NAMES.indexOf(opts.state) }),
          ...(opts.all && { children: true }),
        };
        const items: InstanceSummary[] = [];
        for (const id of flows) items.push(...(await client.instances.list(id, query)).items);
        items.sort((a, b) => (a.processInstanceId < b.processInstanceId ? 1 : -1));
        const page = items.slice(0, opts.limit);
        if (globals(cmd).json) return printJson(ctx, page);
        ctx.stdout.write(
          table(
            ['ID', 'FLOW', 'VERSION', 'STATE', 'STARTED', 'CHILDREN', 'CORRELATION KEY'],
            page.map((i) => [
              // With --all a child says whose it is.
              i.parentInstanceId
                ? `${i.processInstanceId} (child of …${i.parentInstanceId.slice(-12)})`
                : i.processInstanceId,
              i.processName,
              i.processVersion,
              STATE_NAMES[i.stateCd] ?? String(i.stateCd),
              i.startTime,
              i.childCount > 0 ? String(i.childCount) : '',
              i.correlationKey ?? '',
            ]),
          ),
        );
      },
    );

  instances
    .command('get')
    .description("one execution: state, nodes, each agent's conversation, variables, output, error")
    .addHelpText('after', '\nExample:\n  $ wfx instances get 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f')
    .argument('<id>', 'the processInstanceId')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const inst = await client.instances.get(id);
      if (globals(cmd).json) return printJson(ctx, inst);
      ctx.stdout.write(
        `${inst.processInstanceId}  ${inst.processName} v${inst.processVersion}  ${STATE_NAMES[inst.stateCd]}\n` +
          `started ${inst.startTime}${inst.endTime ? `, ended ${inst.endTime}` : ''}${inst.correlationKey ? `, correlation key ${inst.correlationKey}` : ''}\n` +
          (inst.parentInstanceId
            ? `child of ${inst.parentInstanceId}${inst.toolCallId ? `, running its agent's tool call ${inst.toolCallId}` : ''}\n`
            : '') +
          (inst.usage
            ? `model usage: ${inst.usage.calls} call${inst.usage.calls === 1 ? '' : 's'}, ${inst.usage.inputTokens} input + ${inst.usage.outputTokens} output tokens\n`
            : '') +
          '\n' +
          table(
            ['NODE', 'TYPE', 'STATUS', 'WAITING FOR'],
            inst.nodes.map((n) => [
              n.nodeId,
              n.nodeType,
              STATUS_NAMES[n.statusCd] ?? String(n.statusCd),
              waitingFor(n),
            ]),
          ) +
          conversations(inst, terminalWidth(ctx)) +
          children(inst) +
          `\nvariables: ${JSON.stringify(inst.data, null, 2)}\n` +
          (inst.output ? `output: ${JSON.stringify(inst.output, null, 2)}\n` : ''),
      );
    });

  instances
    .command('cancel')
    .description('cancel a running execution')
    .addHelpText('after', '\nExample:\n  $ wfx instances cancel 01a1fdd5-d8d6-7a1e-a2ab-6e877707f49f')
    .argument('<id>', 'the processInstanceId')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const res = await (await clientFor(ctx, cmd)).instances.cancel(id);
      if (globals(cmd).json) printJson(ctx, res);
      else ctx.stdout.write(`${id} cancelled\n`);
    });
}

/**
 * The execution's child executions under the node that started each (a loop's iterations, a
 * subprocess, an agent's tools), as a tree; '' without any. `wfx instances get` on a child
 * shows its own.
 */
function children(inst: InstanceView): string {
  const starters = inst.nodes.filter((n) => (n.childInstanceIds?.length ?? 0) > 0);
  if (starters.length === 0) return '';
  const lines = [`\nchildren:`];
  starters.forEach((n, i) => {
    const last = i === starters.length - 1;
    lines.push(`${last ? '└─' : '├─'} ${n.nodeId} (${n.nodeType}): ${n.childInstanceIds!.length}`);
    n.childInstanceIds!.forEach((id, j) =>
      lines.push(`${last ? '   ' : '│  '}${j === n.childInstanceIds!.length - 1 ? '└─' : '├─'} ${id}`),
    );
  });
  return `${lines.join('\n')}\n`;
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
