import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { WfxError } from '../../shared/errors.js';
import { flowSchema } from '../../shared/flow/schema.js';
import { formatProblem, validateFlowSource, type FlowProblem } from '../../shared/flow/validate.js';
import { globals, printJson, type CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';

/** `wfx flow validate|schema` (publish, list and show talk to a daemon: the CLI issue adds them). */
export function registerFlow(program: Command, ctx: CliContext): void {
  const flow = program.command('flow').description('check and publish flow files');

  flow
    .command('validate')
    .description('check flow files with the daemon\'s own validator (no daemon needed); exit 2 if any has a problem')
    .argument('<files...>', 'flow files (YAML or JSON)')
    .addHelpText('after', '\nExamples:\n  $ wfx flow validate flows/*.yaml\n  $ wfx flow validate order.yaml --json')
    .action(async (files: string[], _opts: unknown, cmd: Command) => {
      const results: Array<{ file: string; ok: boolean; problems: readonly FlowProblem[] }> = [];
      for (const file of files) {
        let text: string;
        try {
          text = await readFile(resolve(ctx.cwd, file), 'utf8');
        } catch (err) {
          throw new WfxError('USAGE_ERROR', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
        }
        const v = validateFlowSource(text);
        results.push({ file, ok: v.ok, problems: v.problems });
      }
      if (globals(cmd).json) printJson(ctx, results);
      else {
        for (const r of results) {
          if (r.ok) ctx.stdout.write(`${r.file}: ok\n`);
          else for (const p of r.problems) ctx.stderr.write(`${formatProblem(r.file, p)}\n`);
        }
        const bad = results.filter((r) => !r.ok);
        if (bad.length > 0) {
          const count = bad.reduce((n, r) => n + r.problems.length, 0);
          ctx.stderr.write(`FLOW_INVALID: ${count} problem${count === 1 ? '' : 's'} in ${bad.length} of ${results.length} file${results.length === 1 ? '' : 's'}\n`);
        }
      }
      if (results.some((r) => !r.ok)) ctx.exitCode = EXIT.USAGE;
    });

  flow
    .command('schema')
    .description('print the JSON Schema of flow files (point your editor at it)')
    .addHelpText('after', '\nExample:\n  $ wfx flow schema > flow.schema.json\n  then, first line of a flow file:  # yaml-language-server: $schema=./flow.schema.json')
    .action(() => printJson(ctx, flowSchema()));
}
