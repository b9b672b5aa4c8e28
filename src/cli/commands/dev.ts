import { oidcOptions } from '../oidc-options.js';
import { tracingOptions } from '../tracing-options.js';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { launchDaemon, type RunningDaemon } from '../../daemon/process/launcher.js';
import { isFlowFile } from '../../shared/flow/files.js';
import type { CliContext } from '../context.js';
import {
  MAX_FILE_SIZE_HELP,
  parseDepth,
  parseMegabytes,
  parsePort,
  parseReplayWindow,
  REPLAY_WINDOW_HELP,
} from '../daemon-options.js';
import { addRunFlags, runOptions, type RunFlags } from '../run-flags.js';

/**
 * `wfx dev`: the daemon in the foreground with readable logs, publishing every flow file of the
 * flows directory to DEVELOPMENT at start and again whenever one changes. A file that does not
 * validate is reported with file:line:column; the daemon keeps running.
 */
export function registerDev(program: Command, ctx: CliContext): void {
  addRunFlags(
    program
      .command('dev')
      .description('run the daemon here and republish flows/ to DEVELOPMENT whenever a file changes')
      .option('--flows <dir>', 'the flow files to watch', 'flows')
      .option('--test', "run the flows' test files (*.test.yaml) at start and after each change (wfx test)")
      .option('--port <port>', 'port to listen on (0 picks a free one)', parsePort, 7878)
      .option('--host <host>', 'address to listen on', '127.0.0.1')
      .option('--max-json-depth <n>', 'how deep untrusted JSON may nest (default 64)', parseDepth)
      .option('--max-file-size <MiB>', MAX_FILE_SIZE_HELP, parseMegabytes)
      .option('--webhook-replay-window <duration>', REPLAY_WINDOW_HELP, parseReplayWindow)
      .option('--http-deny <cidrs>', 'CIDRs serviceTask may never connect to, comma-separated (default $WFX_HTTP_DENY)')
      .option(
        '--http-allow <cidrs>',
        'CIDRs serviceTask may connect to though refused by default: own port, link-local (default $WFX_HTTP_ALLOW)',
      ),
  )
    .addHelpText('after', '\nExamples:\n  $ wfx dev\n  $ wfx dev --flows ./workflows --port 0')
    .action(async (opts: { flows: string; test?: boolean } & RunFlags, cmd: Command) => {
      const flowsDir = resolve(ctx.cwd, opts.flows);
      const running = await launchDaemon({
        ...runOptions(ctx, cmd, opts),
        foreground: true,
        flowsDir,
        flowsEnvironment: 'DEVELOPMENT',
        ...oidcOptions(ctx, opts),
        ...tracingOptions(ctx, opts),
      });
      const { watch } = await import('chokidar');
      const watcher = watch(flowsDir, {
        ignoreInitial: true,
        // A save can come as several writes: publish once the file has been still for a moment.
        awaitWriteFinish: { stabilityThreshold: 150, pollInterval: 50 },
      });
      const tests = opts.test === true ? flowTestRunner(ctx, flowsDir, running.coverage) : null;
      const publish = (file: string) => {
        if (isFlowFile(file)) void running.publishFile(file, 'DEVELOPMENT').then(() => tests?.run());
        else if (/\.test\.ya?ml$/i.test(file)) tests?.run();
      };
      watcher.on('add', publish).on('change', publish);
      await new Promise<void>((resolve) => watcher.on('ready', () => resolve()));
      ctx.stdout.write(
        `wfx dev: daemon on ${running.info.url}; watching ${flowsDir} (published to DEVELOPMENT on change${tests ? ', tests run' : ''}); Ctrl-C to stop\n`,
      );
      tests?.run();
      const stop = () => void running.stop();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      try {
        await running.stopped;
      } finally {
        await watcher.close();
        await tests?.idle();
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
    });
}

/**
 * `wfx dev --test`: the flow tests of the flows directory, run in this process (wfx test) each
 * time `run` is called, one run at a time (calls during a run make one more after it). Each
 * flow's coverage goes to the daemon's board, for its console to draw on the version published
 * from the file (none when the file is not published: it did not validate).
 */
function flowTestRunner(
  ctx: CliContext,
  flowsDir: string,
  board: RunningDaemon['coverage'],
): { run(): void; idle(): Promise<void> } {
  let running: Promise<void> | null = null;
  let again = false;
  const once = async (): Promise<void> => {
    const { runFlowTests, report } = await import('../../daemon/flow-tests/entry.js');
    const run = await runFlowTests({ paths: [flowsDir], cwd: ctx.cwd, coverage: true });
    if (run.files.length === 0 && run.problems.length === 0) return;
    const now = new Date();
    for (const c of run.coverage ?? []) {
      try {
        board.save(
          'default',
          c.processId,
          { hash: c.hash, file: c.flow, cases: c.cases, covered: [...c.covered] },
          now,
        );
      } catch {
        // Not published (the file did not validate, or another organization's processId): nothing to draw on.
      }
    }
    // The spec report without the coverage lines: the console's flow page draws them.
    ctx.stdout.write(`wfx dev: tests\n${report({ ...run, coverage: undefined }, 'spec')}`);
  };
  return {
    run(): void {
      if (running !== null) {
        again = true;
        return;
      }
      running = (async () => {
        do {
          again = false;
          await once().catch((err: unknown) => ctx.stderr.write(`wfx dev: the tests could not run: ${String(err)}\n`));
        } while (again);
        running = null;
      })();
    },
    idle: () => running ?? Promise.resolve(),
  };
}
