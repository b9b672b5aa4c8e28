import { Option, type Command } from 'commander';
import type { Environment } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { clientFor, secretFromStdin } from '../api.js';
import { globals, printJson, readUserFile, type CliContext } from '../context.js';
import { table } from '../format.js';

const envOption = () =>
  new Option('--env <environment>', 'the environment').choices(['DEVELOPMENT', 'PRODUCTION']).default('PRODUCTION');

/** Where `wfx secrets set` reads a value: never from its arguments, which `ps` and shell history see. */
interface ValueSource {
  stdin?: boolean;
  fromFile?: string;
  fromEnv?: string;
}

/** The value `opts` names, exactly one source; a file's last newline cut, as stdin's. */
async function valueOf(ctx: CliContext, opts: ValueSource): Promise<string> {
  const given = [opts.stdin === true, opts.fromFile !== undefined, opts.fromEnv !== undefined].filter(Boolean).length;
  if (given !== 1)
    throw new WfxError(
      'USAGE_ERROR',
      'give the value one way: --stdin, --from-file FILE or --from-env VAR (never as an argument)',
    );
  if (opts.stdin === true) return secretFromStdin(ctx, 'value');
  if (opts.fromFile !== undefined) {
    const text = (await readUserFile(ctx, opts.fromFile, 'secret file')).toString('utf8').replace(/\r?\n$/, '');
    if (text === '') throw new WfxError('USAGE_ERROR', `${opts.fromFile} is empty`);
    return text;
  }
  const value = ctx.env[opts.fromEnv!];
  if (value === undefined || value === '')
    throw new WfxError('USAGE_ERROR', `the environment variable ${opts.fromEnv} is not set`);
  return value;
}

/** `wfx secrets set|list|delete`: the values flows name as `{secret.NAME}`. */
export function registerSecrets(program: Command, ctx: CliContext): void {
  const secrets = program
    .command('secrets')
    .description('the values flows name as {secret.NAME}, per environment, sealed and never shown (needs ADMIN)');
  secrets
    .command('set')
    .argument('<name>')
    .addOption(envOption())
    .option('--stdin', 'read the value from standard input')
    .option('--from-file <file>', 'read the value from a file (a mounted secret)')
    .option('--from-env <var>', "read the value from this program's environment variable (a pipeline's secret)")
    .option('--org <organization>', 'the organization (system keys)')
    .description('set a value (the daemon seals it; it is never shown again)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ printf %s "$TOKEN" | wfx secrets set WAREHOUSE_TOKEN --stdin\n  $ wfx secrets set WAREHOUSE_TOKEN --from-env CI_WAREHOUSE_TOKEN --env DEVELOPMENT',
    )
    .action(async (name: string, opts: ValueSource & { env: Environment; org?: string }, cmd: Command) => {
      const value = await valueOf(ctx, opts);
      const res = await (
        await clientFor(ctx, cmd)
      ).secrets.set(name, { value, environment: opts.env, ...(opts.org !== undefined && { organization: opts.org }) });
      if (globals(cmd).json) printJson(ctx, res);
      else ctx.stdout.write(`secret ${name} set in ${opts.env}\n`);
    });
  secrets
    .command('list')
    .option('--env <environment>', "one environment's (default: both)")
    .option('--org <organization>', 'one organization (system keys; default every one)')
    .description('the secrets set: names, environments and when, never a value')
    .addHelpText('after', '\nExample:\n  $ wfx secrets list --env PRODUCTION')
    .action(async (opts: { env?: Environment; org?: string }, cmd: Command) => {
      const res = await (
        await clientFor(ctx, cmd)
      ).secrets.list({
        ...(opts.env !== undefined && { environment: opts.env }),
        ...(opts.org !== undefined && { organization: opts.org }),
      });
      if (globals(cmd).json) return printJson(ctx, res.items);
      ctx.stdout.write(
        table(
          ['NAME', 'ENVIRONMENT', 'ORGANIZATION', 'SET'],
          res.items.map((s) => [s.name, s.environment, s.organization, s.updatedAt]),
        ),
      );
    });
  secrets
    .command('delete')
    .argument('<name>')
    .addOption(envOption())
    .option('--org <organization>', 'the organization (system keys)')
    .description('remove a value: a call that names it fails with SECRET_NOT_FOUND')
    .addHelpText('after', '\nExample:\n  $ wfx secrets delete WAREHOUSE_TOKEN --env DEVELOPMENT')
    .action(async (name: string, opts: { env: Environment; org?: string }, cmd: Command) => {
      const res = await (
        await clientFor(ctx, cmd)
      ).secrets.delete(name, { environment: opts.env, ...(opts.org !== undefined && { organization: opts.org }) });
      if (globals(cmd).json) printJson(ctx, res);
      else ctx.stdout.write(`secret ${name} removed from ${opts.env}\n`);
    });
}
