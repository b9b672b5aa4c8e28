import { Option, type Command } from 'commander';
import { clientFor } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';
import { wholeFromOne } from '../options.js';

/** `wfx jobs list`: the jobs of domainTasks that wait, who holds them, their attempts. */
export function registerJobs(program: Command, ctx: CliContext): void {
  const jobs = program.command('jobs').description('jobs of domainTasks waiting for workers (needs WORKFLOW_READ)');
  jobs
    .command('list')
    .description(
      'waiting jobs, oldest first: waiting for a worker, locked (by whom, until when), or in a retry backoff',
    )
    .option('--domain <domain>', 'one domain only')
    .option('--action <action>', 'one action only')
    .option('--limit <n>', 'at most this many', wholeFromOne, 100)
    .addOption(new Option('--org <organization>', 'system keys: one organization (default: every one)'))
    .addHelpText('after', '\nExamples:\n  $ wfx jobs list\n  $ wfx jobs list --domain billing --json')
    .action(async (opts: { domain?: string; action?: string; limit: number; org?: string }, cmd: Command) => {
      const res = await (
        await clientFor(ctx, cmd)
      ).jobs.list({
        ...(opts.domain !== undefined && { domain: opts.domain }),
        ...(opts.action !== undefined && { action: opts.action }),
        limit: opts.limit,
        ...(opts.org !== undefined && { organization: opts.org }),
      });
      if (globals(cmd).json) return printJson(ctx, res.items);
      ctx.stdout.write(
        table(
          ['JOB', 'ACTION', 'STATE', 'WORKER', 'UNTIL', 'ATTEMPT', 'CREATED', 'LAST ERROR'],
          res.items.map((j) => [
            j.key,
            `${j.domain}/${j.action}`,
            j.state,
            j.worker ?? '-',
            j.lockedUntil ?? j.notBefore ?? '-',
            `${j.attempt}/${j.maxAttempts}${j.activations > 1 ? ` (${j.activations} activations)` : ''}`,
            j.createdAt,
            j.lastError ? `${j.lastError.code}: ${j.lastError.message}`.slice(0, 60) : '',
          ]),
        ),
      );
      if (res.more) ctx.stderr.write(`more than ${opts.limit} jobs: narrow with --domain or raise --limit\n`);
    });
}
