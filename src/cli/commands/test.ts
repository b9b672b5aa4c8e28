import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import type { WfxClient } from '../../client/client.js';
import type { FlowCoverageRun } from '../../daemon/flow-tests/entry.js';
import { errorMessage, isWfxError, WfxError } from '../../shared/errors.js';
import { clientFor } from '../api.js';
import { exitCodeFor } from '../exit-codes.js';
import type { CliContext } from '../context.js';
import { registerTestRecord } from './test-record.js';
import { testFileSchema } from '../../shared/flow/test-file-schema.js';

/** `wfx test`: runs flow tests (`*.test.yaml`) in this process, on the engine's own step, with no daemon. */
export function registerTest(program: Command, ctx: CliContext): void {
  const test = program.command('test');
  test
    .description("run flows' test files (*.test.yaml) in-process: mocks, a clock of their own, no daemon")
    .argument('[paths...]', 'test files, or folders to search for *.test.yaml (default: the current folder)')
    .addOption(
      new Option('--reporter <name>', 'how the results are written')
        .choices(['spec', 'tap', 'junit', 'json'])
        .default('spec'),
    )
    .option('--output <file>', 'write the report to a file (the summary still goes to the terminal)')
    .option('--grep <text>', 'run only the cases whose name contains this text')
    .option('--allow-network', "let serviceTasks without a mock, and agents' unmocked MCP servers, call the network")
    .option('--coverage', "report each flow's nodes reached and branches taken, and what no case took")
    .option('--coverage-min <pct>', 'fail (exit 1) when the coverage of all flows together is under this percentage')
    .option(
      '--send-coverage',
      "send each flow's coverage to the daemon, whose console draws it on the version's diagram (implies --coverage)",
    )
    .addHelpText(
      'after',
      "\nExit codes: 0 every case passed, 1 a case failed, 2 a test file or its flow is invalid (with --watch: the last run's).\n" +
        '\nExamples:\n  $ wfx test\n  $ wfx test flows/order.test.yaml --grep "big orders"\n  $ wfx test --coverage --coverage-min 80\n  $ wfx test --reporter junit --output report.xml',
    )
    .option('--watch', 'run again whenever a test file or flow file under the paths changes (Ctrl-C stops)')
    .action(async (paths: string[], opts: TestOptions, cmd: Command) => {
      const min = opts.coverageMin === undefined ? undefined : Number(opts.coverageMin);
      if (min !== undefined && !(min >= 0 && min <= 100))
        throw new WfxError('USAGE_ERROR', `--coverage-min takes a percentage from 0 to 100, not "${opts.coverageMin}"`);
      const send = opts.sendCoverage === true ? async () => clientFor(ctx, cmd) : null;
      const once = () => runOnce(ctx, paths, opts, min, send);
      await once();
      if (opts.watch === true) await watchAndRun(ctx, paths, once);
    });
  registerTestRecord(test, ctx);
  test
    .command('schema')
    .description('the JSON Schema of test files, for editors')
    .addHelpText(
      'after',
      '\nExample:\n  $ wfx test schema > schemas/test.schema.json\n  then, first line of a test file:  # yaml-language-server: $schema=../schemas/test.schema.json',
    )
    .action(() => {
      ctx.stdout.write(`${JSON.stringify(testFileSchema(), null, 2)}\n`);
    });
}

interface TestOptions {
  reporter: 'spec' | 'tap' | 'junit' | 'json';
  output?: string;
  grep?: string;
  allowNetwork?: boolean;
  coverage?: boolean;
  coverageMin?: string;
  sendCoverage?: boolean;
  watch?: boolean;
}

/** One run of the flow tests `paths` name: its report written, the exit code set. */
async function runOnce(
  ctx: CliContext,
  paths: string[],
  opts: TestOptions,
  min: number | undefined,
  send: (() => Promise<WfxClient>) | null,
): Promise<void> {
  // Loaded here: the engine's step and its sandbox are for this command alone.
  const { runFlowTests, report, exitCodeOf, totals, totalCoverage } = await import('../../daemon/flow-tests/entry.js');
  const run = await runFlowTests({
    paths,
    cwd: ctx.cwd,
    ...(opts.grep !== undefined && { grep: opts.grep }),
    ...(opts.allowNetwork === true && { allowNetwork: true }),
    ...((opts.coverage === true || min !== undefined || send !== null) && { coverage: true }),
  });
  const text = report(run, opts.reporter);
  if (opts.output === undefined) ctx.stdout.write(text);
  else {
    const out = resolve(ctx.cwd, opts.output);
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, text);
    const t = totals(run);
    ctx.stderr.write(
      `${t.passed} passed, ${t.failed} failed, ${new Set(run.problems.map((p) => p.file)).size} invalid: ${opts.reporter} report in ${opts.output}\n`,
    );
  }
  ctx.exitCode = exitCodeOf(run, min);
  if (run.files.length === 0 && run.problems.length === 0)
    ctx.stderr.write(
      opts.grep === undefined
        ? `note: no test files (*.test.yaml) under ${paths.length > 0 ? paths.join(', ') : 'this folder'}\n`
        : `note: no case's name contains "${opts.grep}"\n`,
    );
  if (min !== undefined && ctx.exitCode === 1 && totals(run).failed === 0)
    ctx.stderr.write(
      `COVERAGE_TOO_LOW: the flows' coverage is ${totalCoverage(run).toFixed(1)}%, under --coverage-min ${min}\n`,
    );
  if (send !== null) await sendCoverage(ctx, run.coverage ?? [], send);
}

/**
 * `--send-coverage`: each flow's coverage to the daemon, kept for the version published with the
 * definition the tests ran. One that is not kept is said on stderr with its code, and a run that
 * passed then exits as that code says (5: no daemon to send to).
 */
async function sendCoverage(
  ctx: CliContext,
  coverage: readonly FlowCoverageRun[],
  connect: () => Promise<WfxClient>,
): Promise<void> {
  const refused = (flow: string, err: unknown) => {
    const code = isWfxError(err) ? err.code : 'INTERNAL_ERROR';
    ctx.stderr.write(`coverage of ${flow} not sent: ${code}: ${errorMessage(err)}\n`);
    if (ctx.exitCode === 0) ctx.exitCode = exitCodeFor(code);
  };
  let client: WfxClient;
  try {
    client = await connect();
  } catch (err) {
    for (const c of coverage) refused(c.flow, err);
    return;
  }
  for (const c of coverage) {
    try {
      const kept = await client.flows.sendCoverage(c.processId, {
        hash: c.hash,
        file: c.flow,
        cases: c.cases,
        covered: [...c.covered],
      });
      ctx.stderr.write(
        `coverage of ${c.flow} sent: drawn on version ${kept.version} of ${c.processId} in the console\n`,
      );
    } catch (err) {
      refused(c.flow, err);
    }
  }
}

/**
 * `--watch`: runs `once` again each time a YAML or JSON file under the paths changes (a test file,
 * a flow it names beside it), one run at a time (changes during a run make one more), until
 * SIGINT or SIGTERM; the exit code is the last run's.
 */
async function watchAndRun(ctx: CliContext, paths: string[], once: () => Promise<void>): Promise<void> {
  const { watch } = await import('chokidar');
  const { isFlowFile } = await import('../../shared/flow/files.js');
  const targets = (paths.length > 0 ? paths : ['.']).map((p) => resolve(ctx.cwd, p));
  const watcher = watch(targets, {
    ignoreInitial: true,
    ignored: (path: string) => /(^|[/\\])(node_modules|\.[^/\\]+)([/\\]|$)/.test(path.slice(ctx.cwd.length)),
    // A save can come as several writes: run once the file has been still for a moment.
    awaitWriteFinish: { stabilityThreshold: 150, pollInterval: 50 },
  });
  let running: Promise<void> | null = null;
  let again: string | null = null;
  const rerun = (changed: string): void => {
    if (running !== null) {
      again = changed;
      return;
    }
    running = (async () => {
      for (let next: string | null = changed; next !== null;) {
        again = null;
        ctx.stdout.write(
          `\n-- ${new Date().toISOString().slice(11, 19)} ${relative(ctx.cwd, next) || next} changed: running again\n`,
        );
        await once();
        next = again;
      }
      running = null;
    })();
  };
  const onFile = (file: string): void => {
    if (isFlowFile(file) || /\.test\.ya?ml$/i.test(file)) rerun(file);
  };
  watcher.on('add', onFile).on('change', onFile);
  await new Promise<void>((ready) => watcher.on('ready', () => ready()));
  ctx.stderr.write(
    `watching ${targets.map((t) => relative(ctx.cwd, t) || '.').join(', ')} for changes; Ctrl-C to stop\n`,
  );
  await new Promise<void>((stopped) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      stopped();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await watcher.close();
  await running;
}
