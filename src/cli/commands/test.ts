import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { WfxError } from '../../shared/errors.js';
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
    .option('--allow-network', 'let serviceTasks without a mock call the network')
    .option('--coverage', "report each flow's nodes reached and branches taken, and what no case took")
    .option('--coverage-min <pct>', 'fail (exit 1) when the coverage of all flows together is under this percentage')
    .addHelpText(
      'after',
      '\nExit codes: 0 every case passed, 1 a case failed, 2 a test file or its flow is invalid.\n' +
        '\nExamples:\n  $ wfx test\n  $ wfx test flows/order.test.yaml --grep "big orders"\n  $ wfx test --coverage --coverage-min 80\n  $ wfx test --reporter junit --output report.xml',
    )
    .action(
      async (
        paths: string[],
        opts: {
          reporter: 'spec' | 'tap' | 'junit' | 'json';
          output?: string;
          grep?: string;
          allowNetwork?: boolean;
          coverage?: boolean;
          coverageMin?: string;
        },
      ) => {
        const min = opts.coverageMin === undefined ? undefined : Number(opts.coverageMin);
        if (min !== undefined && !(min >= 0 && min <= 100))
          throw new WfxError(
            'USAGE_ERROR',
            `--coverage-min takes a percentage from 0 to 100, not "${opts.coverageMin}"`,
          );
        // Loaded here: the engine's step and its sandbox are for this command alone.
        const { runFlowTests, report, exitCodeOf, totals, totalCoverage } =
          await import('../../daemon/flow-tests/entry.js');
        const run = await runFlowTests({
          paths,
          cwd: ctx.cwd,
          ...(opts.grep !== undefined && { grep: opts.grep }),
          ...(opts.allowNetwork === true && { allowNetwork: true }),
          ...((opts.coverage === true || min !== undefined) && { coverage: true }),
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
        if (min !== undefined && ctx.exitCode === 1 && totals(run).failed === 0)
          ctx.stderr.write(
            `COVERAGE_TOO_LOW: the flows' coverage is ${totalCoverage(run).toFixed(1)}%, under --coverage-min ${min}\n`,
          );
      },
    );
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
