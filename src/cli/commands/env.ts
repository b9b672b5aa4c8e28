import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import type { Environment } from '../../shared/api/index.js';
import { dataDirPaths, type DaemonInfo } from '../../shared/data-dir.js';
import type { WfxClient } from '../../client/client.js';
import { clientFor } from '../api.js';
import { dataDirOf, globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';

const ENVIRONMENTS: readonly Environment[] = ['PRODUCTION', 'DEVELOPMENT'];

const envOption = (what: string) =>
  new Option('--env <environment>', `${what} (default: DEVELOPMENT under wfx dev, else PRODUCTION)`).choices([
    'DEVELOPMENT',
    'PRODUCTION',
  ]);

/**
 * The environment a command works in: `--env`, else the one `wfx dev` publishes to when the
 * daemon talked to is this directory's `wfx dev` daemon, else PRODUCTION; with why, for its line.
 */
async function environmentOf(
  ctx: CliContext,
  cmd: Command,
  client: WfxClient,
  given: Environment | undefined,
): Promise<{ readonly environment: Environment; readonly why: string }> {
  if (given !== undefined) return { environment: given, why: '' };
  const local = await readFile(dataDirPaths(dataDirOf(ctx, globals(cmd))).daemonJson, 'utf8').then(
    (t) => JSON.parse(t) as DaemonInfo,
    () => null,
  );
  const same = local !== null && local.url.replace(/\/+$/, '') === client.connection.url.replace(/\/+$/, '');
  if (same && local.flowsEnvironment === 'DEVELOPMENT')
    return { environment: 'DEVELOPMENT', why: " (wfx dev's environment; --env PRODUCTION for the other)" };
  return { environment: 'PRODUCTION', why: ' (--env DEVELOPMENT for the other)' };
}

/** `wfx env set|unset|list`: the {env.NAME} values flows read. */
export function registerEnv(program: Command, ctx: CliContext): void {
  const env = program.command('env').description('the {env.NAME} values flows read, per environment (needs ADMIN)');
  env
    .command('set')
    .argument('<name>')
    .argument('<value>')
    .addOption(envOption('the environment'))
    .description('set a value')
    .addHelpText('after', '\nExample:\n  $ wfx env set API_URL https://api.example.com --env DEVELOPMENT')
    .action(async (name: string, value: string, opts: { env?: Environment }, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const { environment, why } = await environmentOf(ctx, cmd, client, opts.env);
      const res = await client.environments.set(environment, name, value);
      if (globals(cmd).json) printJson(ctx, res);
      else ctx.stdout.write(`${name} set in ${environment}${why}\n`);
    });
  env
    .command('unset')
    .argument('<name>')
    .addOption(envOption('the environment'))
    .description('remove a value')
    .addHelpText('after', '\nExample:\n  $ wfx env unset API_URL --env DEVELOPMENT')
    .action(async (name: string, opts: { env?: Environment }, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const { environment, why } = await environmentOf(ctx, cmd, client, opts.env);
      const res = await client.environments.unset(environment, name);
      if (globals(cmd).json) printJson(ctx, res);
      else ctx.stdout.write(`${name} removed from ${environment}${why}\n`);
    });
  env
    .command('list')
    .addOption(
      new Option('--env <environment>', 'only this environment (default: both)').choices(['DEVELOPMENT', 'PRODUCTION']),
    )
    .description("the values of both environments, or of one; --json: one's as {NAME: value}, both by environment")
    .addHelpText('after', '\nExamples:\n  $ wfx env list\n  $ wfx env list --env PRODUCTION --json')
    .action(async (opts: { env?: Environment }, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const environments = opts.env !== undefined ? [opts.env] : ENVIRONMENTS;
      const values = new Map<Environment, Readonly<Record<string, string>>>();
      for (const e of environments) values.set(e, (await client.environments.variables(e)).variables);
      if (globals(cmd).json)
        return printJson(ctx, opts.env !== undefined ? values.get(opts.env) : Object.fromEntries(values));
      const rows = [...values].flatMap(([e, vars]) => Object.entries(vars).map(([k, v]) => [e, k, v]));
      if (rows.length === 0) {
        ctx.stdout.write(`no values in ${environments.join(' or ')}: wfx env set NAME VALUE [--env ENV]\n`);
        return;
      }
      ctx.stdout.write(table(['ENVIRONMENT', 'NAME', 'VALUE'], rows));
    });
}
