import type { Command } from 'commander';
import { WfxError } from '../../shared/errors.js';
import { Schedule, ScheduleError } from '../../shared/schedule.js';
import { globals, printJson, type CliContext } from '../context.js';
import { wholeNumber } from '../options.js';

/** `wfx cron next`: the next fire times of a schedule, with the scheduler's own code. */
export function registerCron(program: Command, ctx: CliContext): void {
  const cron = program.command('cron').description('check schedule expressions');
  cron
    .command('next')
    .description('the next fire times of a five-field cron expression, one ISO time a line (no daemon needed)')
    .argument('<cron>', 'minute hour day-of-month month day-of-week')
    .option('--from <iso>', 'from this instant (default now)')
    .option('--tz <zone>', 'IANA time zone the expression is read in', 'UTC')
    .option('--count <n>', 'how many', wholeNumber(1, 1000), 5)
    .addHelpText(
      'after',
      "\nExamples:\n  $ wfx cron next '*/15 9-17 * * 1-5' --tz Europe/Berlin\n  $ wfx cron next '30 2 * * *' --tz Europe/Berlin --from 2027-03-27T00:00:00Z --count 3   # skips the DST gap",
    )
    .action((expr: string, opts: { from?: string; tz: string; count: number }, cmd: Command) => {
      const from = opts.from === undefined ? new Date() : new Date(opts.from);
      if (Number.isNaN(from.getTime()))
        throw new WfxError('USAGE_ERROR', `--from ${opts.from} is not an ISO 8601 instant`);
      let times: Date[];
      try {
        times = new Schedule(expr, opts.tz).nextTimes(from, opts.count);
      } catch (err) {
        if (err instanceof ScheduleError) throw new WfxError('USAGE_ERROR', err.message);
        throw err;
      }
      if (globals(cmd).json)
        printJson(
          ctx,
          times.map((t) => t.toISOString()),
        );
      else ctx.stdout.write(times.map((t) => `${t.toISOString()}\n`).join(''));
    });
}
