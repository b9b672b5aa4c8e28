import { InvalidArgumentError, Option, type Command } from 'commander';
import { parseDuration, DurationError } from '../../shared/duration.js';
import { WfxError } from '../../shared/errors.js';
import type { JobHandler, WorkerEvent } from '../../worker/worker.js';
import { globals, type CliContext } from '../context.js';
import { resolveConnection } from '../credentials.js';
import { wholeFromOne } from '../options.js';

const duration = (v: string) => {
  try {
    return parseDuration(v);
  } catch (err) {
    if (err instanceof DurationError) throw new InvalidArgumentError(err.message);
    throw err;
  }
};

interface RunOptions {
  readonly domain?: string;
  readonly command?: string;
  readonly actions?: string;
  readonly concurrency: number;
  readonly lockDuration: number;
  readonly stopTimeout: number;
  readonly name?: string;
  readonly org?: string;
}

/** One line per event: what a person watching the worker wants to read. */
function describe(e: WorkerEvent): string {
  switch (e.type) {
    case 'polling':
      return `worker ${e.worker} waiting for jobs`;
    case 'completed':
      return `completed ${e.job.domain}/${e.job.action} ${e.job.key} in ${Math.round(e.ms)} ms`;
    case 'failed':
      return `failed ${e.job.domain}/${e.job.action} ${e.job.key}: ${e.code}: ${e.message} (${e.status})`;
    case 'dropped':
      return `dropped ${e.job.key}: ${e.why}`;
    case 'released':
      return `released ${e.job.key}`;
    case 'disconnected':
      return `cannot reach the daemon (${e.error}); retrying in ${e.retryInMs} ms`;
    case 'stopped':
      return 'worker stopped';
  }
}

/** `wfx worker run`: a job worker from a module of handlers, or a program run per job. */
export function registerWorker(program: Command, ctx: CliContext): void {
  const worker = program.command('worker').description('run a job worker for a domain (needs the worker role)');
  worker
    .command('run')
    .argument('[module]', 'a JavaScript module exporting one function per action: (input, job) => output')
    .option(
      '--command <command>',
      'instead of a module: a program run per job (job JSON on stdin, output JSON on stdout)',
    )
    .option('--domain <domain>', "the domain (default: the module's `domain` export)")
    .option('--actions <actions>', 'with --command: only these actions, comma-separated (default: every one)')
    .option('--concurrency <n>', 'jobs at once at most', wholeFromOne, 4)
    .option(
      '--lock-duration <duration>',
      'how long a job stays locked to this worker between heartbeats',
      duration,
      60_000,
    )
    .option(
      '--stop-timeout <duration>',
      'on SIGTERM, wait this long for jobs in hand before releasing them',
      duration,
      10_000,
    )
    .option('--name <name>', 'the worker name (default: host, pid and a random suffix)')
    .addOption(new Option('--org <organization>', 'system keys: the organization whose jobs (default: default)'))
    .addHelpText(
      'after',
      "\nExamples:\n  $ wfx worker run ./billing.js --domain billing --concurrency 8\n  $ wfx worker run --domain billing --command 'python3 handle.py'",
    )
    .action(async (module: string | undefined, opts: RunOptions, cmd: Command) => {
      if ((module === undefined) === (opts.command === undefined))
        throw new WfxError('USAGE_ERROR', 'give a module of handlers, or --command, not both');
      const lib = await import('../../worker/index.js');
      let handlers: Record<string, JobHandler>;
      let domain = opts.domain;
      if (opts.command !== undefined) {
        const run = lib.commandHandler(opts.command, { cwd: ctx.cwd });
        const actions = opts.actions
          ?.split(',')
          .map((a) => a.trim())
          .filter(Boolean) ?? ['*'];
        handlers = Object.fromEntries(actions.map((a) => [a, run]));
      } else {
        const loaded = await lib.loadHandlers(module!, ctx.cwd).catch((err: unknown) => {
          throw new WfxError('USAGE_ERROR', `cannot load ${module}: ${(err as Error).message}`);
        });
        handlers = loaded.handlers;
        domain ??= loaded.domain;
      }
      if (domain === undefined)
        throw new WfxError('USAGE_ERROR', '--domain is needed (or a `domain` export of the module)');
      const conn = await resolveConnection(ctx, globals(cmd));
      const json = globals(cmd).json === true;
      const w = lib.createWorker({
        url: conn.url,
        apiKey: conn.apiKey ?? '',
        domain,
        handlers,
        concurrency: opts.concurrency,
        lockDuration: opts.lockDuration,
        stopTimeout: opts.stopTimeout,
        ...(opts.name !== undefined && { name: opts.name }),
        ...(opts.org !== undefined && { organization: opts.org }),
        onEvent: (e) => {
          if (json) ctx.stdout.write(`${JSON.stringify({ ...e, at: new Date().toISOString() })}\n`);
          else (e.type === 'disconnected' || e.type === 'dropped' ? ctx.stderr : ctx.stdout).write(`${describe(e)}\n`);
        },
      });
      let signals = 0;
      const onSignal = (): void => void w.stop({ now: ++signals > 1 });
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
      try {
        await w.done;
      } finally {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
      }
    });
}
