/* `wfx schedules`: list a daemon's schedules, pause and resume a flow's, backfill one over a range. */
import { Option, type Command } from 'commander';
import type { ScheduleHealth } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { clientFor } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';
import { wholeNumber } from '../options.js';
import { processIdOf } from '../resolve.js';

type EnvName = 'DEVELOPMENT' | 'PRODUCTION';

const envOption = () =>
  new Option('--env <environment>', 'the environment (default PRODUCTION)').choices(['DEVELOPMENT', 'PRODUCTION']);

/** An ISO instant option's value, or USAGE_ERROR naming the option. */
function instant(name: string, value: string): Date {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new WfxError('USAGE_ERROR', `${name} ${value} is not an ISO 8601 instant`);
  return d;
}

/** A schedule's state as the list says it: paused for one turned off. */
const stateWord = (h: ScheduleHealth): string => (h.state === 'disabled' ? 'paused' : h.state);

export function registerSchedules(program: Command, ctx: CliContext): void {
  const schedules = program
    .command('schedules')
    .description("a daemon's schedule triggers: list them, pause and resume a flow's, backfill missed fire times");

  schedules
    .command('list')
    .description('every schedule of the active flow versions: state, overlap, next and last fire')
    .addHelpText('after', '\nExample:\n  $ wfx schedules list --json')
    .action(async (_opts: object, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const items = (await client.triggers.list()).items.filter((h): h is ScheduleHealth => h.type === 'schedule');
      if (globals(cmd).json) return printJson(ctx, items);
      if (items.length === 0) return void ctx.stdout.write('no schedules in the active flow versions\n');
      ctx.stdout.write(
        table(
          ['FLOW', 'ENV', 'CRON', 'TZ', 'STATE', 'OVERLAP', 'WAITING', 'NEXT', 'LAST'],
          items.map((h) => [
            h.flowName,
            h.environment,
            h.cron,
            h.timezone,
            stateWord(h),
            h.overlap,
            String(h.waiting),
            h.nextFire ?? '-',
            h.lastFire ?? '-',
          ]),
        ),
      );
      for (const h of items) if (h.lastError) ctx.stderr.write(`${h.flowName} (${h.environment}): ${h.lastError}\n`);
    });

  for (const [action, what] of [
    ['pause', 'stop firing until resumed'],
    ['resume', 'fire again from now on (fires missed meanwhile follow missedRuns)'],
  ] as const)
    schedules
      .command(action)
      .description(`${action} a flow's schedules in an environment: ${what}`)
      .argument('<flow>', "a processId, or a flow's name (where unique)")
      .addOption(envOption())
      .addHelpText('after', `\nExample:\n  $ wfx schedules ${action} nightly-report --env DEVELOPMENT`)
      .action(async (flow: string, opts: { env?: EnvName }, cmd: Command) => {
        const client = await clientFor(ctx, cmd);
        const processId = await processIdOf(client, flow);
        const body = { environment: opts.env ?? 'PRODUCTION' } as const;
        const done = await (action === 'pause'
          ? client.schedules.pause(processId, body)
          : client.schedules.resume(processId, body));
        if (globals(cmd).json) return printJson(ctx, done);
        ctx.stdout.write(`${flow}: schedules ${done.paused ? 'paused' : 'resumed'} in ${done.environment}\n`);
      });

  schedules
    .command('backfill')
    .description(
      "start one execution per fire time of a flow's schedule from --from to --to, each with its {scheduledTime} (as its overlap says: one at a time unless allow)",
    )
    .argument('<flow>', "a processId, or a flow's name (where unique)")
    .requiredOption('--from <iso>', 'the first instant (fire times at or after it)')
    .requiredOption('--to <iso>', 'the last instant (fire times at or before it)')
    .option('--schedule <n>', "which of the flow's schedule triggers, counted from 1", wholeNumber(1, 100), 1)
    .addOption(envOption())
    .addHelpText(
      'after',
      '\nExample:\n  $ wfx schedules backfill nightly-report --from 2026-11-20T00:00:00Z --to 2026-11-21T00:00:00Z',
    )
    .action(async (flow: string, opts: { from: string; to: string; schedule: number; env?: EnvName }, cmd: Command) => {
      const from = instant('--from', opts.from).toISOString();
      const to = instant('--to', opts.to).toISOString();
      const client = await clientFor(ctx, cmd);
      const processId = await processIdOf(client, flow);
      const done = await client.schedules.backfill(processId, {
        from,
        to,
        schedule: opts.schedule,
        environment: opts.env ?? 'PRODUCTION',
      });
      if (globals(cmd).json) return printJson(ctx, done);
      const n = done.fireTimes.length;
      ctx.stdout.write(
        n === 0
          ? `${flow}: no fire time from ${from} to ${to}\n`
          : `${flow}: backfilling ${n} fire time${n === 1 ? '' : 's'} from ${done.fireTimes[0]} to ${done.fireTimes.at(-1)}\n`,
      );
    });
}
