import { InvalidArgumentError, Option, type Command } from 'commander';
import { FAILURE_SORTS, type FailureGroup, type FailureGroups, type FailureSort } from '../../shared/api/index.js';
import { formatDuration, isDuration, parseDuration } from '../../shared/duration.js';
import { clientFor } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';
import { wholeNumber } from '../options.js';

/** The most groups `--limit` asks for (GET /process/failures' most). */
const GROUPS_MAX = 500;
/** The longest message printed when the output is not a terminal (a terminal: what fits its width). */
const PIPED_MESSAGE = 200;

interface FailuresOptions {
  readonly flow?: string;
  readonly since?: number;
  readonly env?: 'DEVELOPMENT' | 'PRODUCTION';
  readonly sort: FailureSort;
  readonly limit: number;
  readonly all?: boolean;
}

/**
 * `--since`: a duration back from `now` (`1h`, `2d`, `PT30M`) or an ISO 8601 instant, as ms since
 * the epoch. Throws commander's InvalidArgumentError (a usage error) for anything else.
 */
export function parseSince(text: string, now: Date = new Date()): number {
  if (isDuration(text)) return now.getTime() - parseDuration(text);
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at)) throw new InvalidArgumentError('must be a duration (1h, 2d, PT30M) or an ISO 8601 instant');
  return at;
}

/** `wfx instances failures`: failed executions grouped by flow, failure code and node. */
export function registerFailures(instances: Command, ctx: CliContext): void {
  instances
    .command('failures')
    .description('failed executions grouped by flow, failure code and node: counts and the newest of each')
    .option('--flow <processId>', 'only this flow')
    .option('--since <when>', 'only executions started since: a duration back (1h, 2d) or an ISO 8601 instant', (v) =>
      parseSince(v),
    )
    .addOption(
      new Option('--env <environment>', 'only executions in this environment').choices(['DEVELOPMENT', 'PRODUCTION']),
    )
    .addOption(
      new Option('--sort <order>', 'newest (the latest failures first) or count (the largest groups first)')
        .choices([...FAILURE_SORTS])
        .default('newest'),
    )
    .option('--limit <n>', 'at most this many groups', wholeNumber(1, GROUPS_MAX), 50)
    .option('--all', "child executions too (loop iterations, subprocesses, agents' tools); default: top-level only")
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx instances failures\n  $ wfx instances failures --since 1h --sort count\n  $ wfx instances failures --flow 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --json',
    )
    .action(async (opts: FailuresOptions, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const answer = await client.instances.failures({
        ...(opts.flow !== undefined && { processId: opts.flow }),
        ...(opts.since !== undefined && { startedAfter: new Date(opts.since).toISOString() }),
        ...(opts.env !== undefined && { environment: opts.env }),
        ...(opts.all && { children: true }),
        sort: opts.sort,
        limit: opts.limit,
      });
      if (globals(cmd).json) return printJson(ctx, answer);
      const columns = (ctx.stdout as { columns?: number }).columns;
      ctx.stdout.write(failuresText(answer, new Date(), ctx.stdout.isTTY && columns ? columns : null));
    });
}

/**
 * The groups as a table (COUNT, CODE, NODE, FLOW, NEWEST with its age, MESSAGE cut to `width`
 * when it is a terminal's), a line counting them, and how to list and retry those of the first
 * group. Pure.
 */
export function failuresText(answer: FailureGroups, now: Date, width: number | null): string {
  if (answer.groups.length === 0) return 'no failed executions\n';
  const rows = answer.groups.map((g) => [
    String(g.count),
    g.errorCode,
    nodeText(g),
    `${g.processName ?? g.processId} v${g.newest.processVersion}`,
    `${g.newest.processInstanceId} ${age(g.newest.at, now)}`,
    oneLine(g.newest.message ?? ''),
  ]);
  const headers = ['COUNT', 'CODE', 'NODE', 'FLOW', 'NEWEST', 'MESSAGE'];
  // The message takes what is left of the line (at least 20 columns), or PIPED_MESSAGE when piped.
  const before = headers.slice(0, -1).map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)) + 2);
  const room = width === null ? PIPED_MESSAGE : Math.max(20, width - before.reduce((a, b) => a + b, 0));
  for (const r of rows) r[5] = cut(r[5]!, room);
  const first = answer.groups[0]!;
  const shown = answer.groups.length < answer.groupCount ? ` (the first ${answer.groups.length} shown)` : '';
  const list = [
    'wfx instances list --state failed',
    `--error-code ${first.errorCode}`,
    ...(first.nodeId !== null ? [`--failed-node ${first.nodeId}`] : []),
    first.processId,
  ].join(' ');
  return (
    table(headers, rows) +
    `\n${answer.total} failed execution${answer.total === 1 ? '' : 's'} in ${answer.groupCount} group${answer.groupCount === 1 ? '' : 's'}${shown}\n` +
    `list the first group: ${list}\n` +
    `retry its newest:     wfx instances retry ${first.newest.processInstanceId}\n`
  );
}

/** The node a group failed at, with its name when it has one of its own; `-` for none. */
function nodeText(g: FailureGroup): string {
  if (g.nodeId === null) return '-';
  return g.nodeName !== undefined && g.nodeName !== g.nodeId ? `${g.nodeId} (${g.nodeName})` : g.nodeId;
}

/** How long ago `at` was, in its largest unit (`5m ago`); `?` when unknown. */
function age(at: string | null, now: Date): string {
  if (at === null) return '?';
  return `${formatDuration(Math.max(0, now.getTime() - Date.parse(at))).split(' ')[0]} ago`;
}

/** `text` on one line (its line breaks as spaces). */
function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ');
}

/** `text` cut to `max` characters, `…` marking the cut. */
function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}
