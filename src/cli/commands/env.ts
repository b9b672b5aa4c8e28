import { Option, type Command } from 'commander';
import type { Environment } from '../../shared/api/index.js';
import { clientFor } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';

const envOption = () =>
  new Option('--env <environment>', 'the environment').choices(['DEVELOPMENT', 'PRODUCTION']).default('PRODUCTION');

/** `wfx env set|unset|list`: the {env.NAME} values flows read. */
export function registerEnv(program: Command, ctx: CliContext): void {
  const env = program.command('env').description('the {env.NAME} values flows read, per environment (needs ADMIN)');
  env
    .command('set')
    .argument('<name>')
    .argument('<value>')
    .addOption(envOption())
    .description('set a value')
    .addHelpText('after', '\nExample:\n  $ wfx env set API_URL https://api.example.com --env DEVELOPMENT')
    .action(async (name: string, value: string, opts: { env: Environment }, cmd: Command) => {
      const res = await (await clientFor(ctx, cmd)).environments.set(opts.env, name, value);
      if (globals(cmd).json) printJson(ctx, res);
      else ctx.stdout.write(`${name} set in ${opts.env}\n`);
    });
  env
    .command('unset')
    .argument('<name>')
    .addOption(envOption())
    .description('remove a value')
    .addHelpText('after', '\nExample:\n  $ wfx env unset API_URL --env DEVELOPMENT')
    .action(async (name: string, opts: { env: Environment }, cmd: Command) => {
      const res = await (await clientFor(ctx, cmd)).environments.unset(opts.env, name);
      if (globals(cmd).json) printJson(ctx, res);
      else ctx.stdout.write(`${name} removed from ${opts.env}\n`);
    });
  env
    .command('list')
    .addOption(envOption())
    .description('the values of an environment')
    .addHelpText('after', '\nExample:\n  $ wfx env list --env PRODUCTION')
    .action(async (opts: { env: Environment }, cmd: Command) => {
      const res = await (await clientFor(ctx, cmd)).environments.variables(opts.env);
      if (globals(cmd).json) return printJson(ctx, res.variables);
      ctx.stdout.write(
        table(
          ['NAME', 'VALUE'],
          Object.entries(res.variables).map(([k, v]) => [k, v]),
        ),
      );
    });
}
