import type { Command } from 'commander';
import { WfxError } from '../../shared/errors.js';
import { compileCondition, evaluateJuel, ExpressionError } from '../../shared/expr/juel.js';
import { resolveTemplate } from '../../shared/expr/template.js';
import { printJson, type CliContext } from '../context.js';
import { readJsonOption } from '../api.js';

/** `wfx expr`: evaluates a `${...}` JUEL expression or a `{ref}` template locally, as the engine would. */
export function registerExpr(program: Command, ctx: CliContext): void {
  program
    .command('expr')
    .description('evaluate a ${...} condition or a {ref} template locally, as the engine does; prints JSON')
    .argument('<expression>', 'a JUEL expression written ${...}, or text with {ref} references')
    .option('--vars <json>', 'variables as a JSON object, or @file', '{}')
    .option('--env <json>', 'values for {env.NAME}, as a JSON object, or @file', '{}')
    .addHelpText(
      'after',
      `\nExamples:\n  $ wfx expr '\${order.total < 1000 && approved}' --vars '{"order":{"total":250},"approved":true}'\n  true\n  $ wfx expr 'Approve order {order.id}?' --vars '{"order":{"id":42}}'\n  "Approve order 42?"`,
    )
    .action(async (expression: string, opts: { vars: string; env: string }) => {
      const vars = await readJsonOption(ctx, opts.vars, '--vars');
      const env = (await readJsonOption(ctx, opts.env, '--env')) as Record<string, string>;
      if (/^\s*\$\{[\s\S]*\}\s*$/.test(expression)) {
        try {
          printJson(ctx, evaluateJuel(compileCondition(expression), { env, ...vars }) ?? null);
        } catch (err) {
          if (err instanceof ExpressionError) throw new WfxError('EXPRESSION_ERROR', err.message);
          throw err;
        }
        return;
      }
      const { value, missing } = resolveTemplate(expression, { vars, env });
      for (const ref of missing)
        ctx.stderr.write(`WARN: reference {${ref}} is missing; it resolved to an empty string\n`);
      printJson(ctx, value ?? null);
    });
}
