import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import type { CliContext } from '../context.js';

/** `wfx test`: runs flow tests (`*.test.yaml`) in this process, on the engine's own step, with no daemon. */
export function registerTest(program: Command, ctx: CliContext): void {
  program
    .command('test')
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
    .addHelpText(
      'after',
      '\nExit codes: 0 every case passed, 1 a case failed, 2 a test file or its flow is invalid.\n' +
        '\nExamples:\n  $ wfx test\n  $ wfx test flows/order.test.yaml --grep "big orders"\n  $ wfx test --reporter junit --output report.xml',
    )
    .action(
      async (
        paths: string[],
        opts: { reporter: 'spec' | 'tap' | 'junit' | 'json'; output?: string; grep?: string; allowNetwork?: boolean },
      ) => {
        // Loaded here: the engine's step and its sandbox are for this command alone.
        const { runFlowTests, report, exitCodeOf, totals } = await import('../../daemon/flow-tests/entry.js');
        const run = await runFlowTests({
          paths,
          cwd: ctx.cwd,
          ...(opts.grep !== undefined && { grep: opts.grep }),
          ...(opts.allowNetwork === true && { allowNetwork: true }),
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
        ctx.exitCode = exitCodeOf(run);
      },
    );
}
