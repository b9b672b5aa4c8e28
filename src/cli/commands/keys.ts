import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Role } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { clientFor } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';
import { addListCommand } from '../named-commands.js';
import { givenOnly } from '../options.js';

const count = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number');
  return n;
};

/** `wfx keys create|list|suspend|activate|revoke`. */
export function registerKeys(program: Command, ctx: CliContext): void {
  const keys = program.command('keys').description('manage API keys (needs ADMIN)');
  keys
    .command('create')
    .description('create an API key; its secret is printed once')
    .requiredOption('--name <name>', 'what it is for')
    .addOption(
      new Option('--role <role>', 'its permissions')
        .choices(['viewer', 'operator', 'developer', 'admin', 'worker'])
        .default('operator'),
    )
    .option('--org <organization>', 'its organization (system admins: any; created if new)')
    .option('--system', 'a system key, bound to no organization (system admins only)')
    .option('--per-minute <n>', 'requests per minute (default unlimited)', count)
    .option('--per-hour <n>', 'requests per hour (default unlimited)', count)
    .option('--expires <duration>', 'expires after this long, e.g. 30d')
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx keys create --name ci --role developer --per-minute 600 --expires 90d\n  $ wfx keys create --name acme-admin --role admin --org acme',
    )
    .action(
      async (
        opts: {
          name: string;
          role: string;
          org?: string;
          system?: boolean;
          perMinute?: number;
          perHour?: number;
          expires?: string;
        },
        cmd: Command,
      ) => {
        if (opts.system && opts.org) throw new WfxError('USAGE_ERROR', '--system and --org do not go together');
        const key = await (
          await clientFor(ctx, cmd)
        ).keys.create({
          name: opts.name,
          role: opts.role as Role, // commander checked the choice
          ...(opts.org !== undefined && { organization: opts.org }),
          ...(opts.system && { system: true }),
          ...givenOnly({
            rateLimitPerMinute: opts.perMinute,
            rateLimitPerHour: opts.perHour,
            expiresIn: opts.expires,
          }),
        });
        if (globals(cmd).json) return printJson(ctx, key);
        ctx.stdout.write(`${key.apiKey}\n`);
        ctx.stderr.write(
          `created key ${key.keyId} (${key.role}, ${key.organization ?? 'system'}); the secret above is shown this once\n`,
        );
      },
    );

  addListCommand(keys, ctx, {
    description: 'API keys (never their secrets)',
    example: '$ wfx keys list --json',
    list: (client) => client.keys.list(),
    table: (items) =>
      table(
        ['KEY ID', 'NAME', 'ROLE', 'ORGANIZATION', 'STATUS', 'LIMITS (min/h)', 'EXPIRES'],
        items.map((k) => [
          k.keyId,
          k.name,
          k.role,
          k.organization ?? '(system)',
          k.status,
          `${k.rateLimitPerMinute ?? '-'}/${k.rateLimitPerHour ?? '-'}`,
          k.expiresAt ?? 'never',
        ]),
      ),
  });

  for (const action of ['suspend', 'activate', 'revoke'] as const) {
    keys
      .command(action)
      .description(action === 'revoke' ? 'revoke a key for good' : `${action} a key`)
      .addHelpText('after', `\nExample:\n  $ wfx keys ${action} 4326020afd8d2dd9`)
      .argument('<keyId>')
      .action(async (keyId: string, _opts: unknown, cmd: Command) => {
        const key = await (await clientFor(ctx, cmd)).keys.setStatus(keyId, action);
        if (globals(cmd).json) printJson(ctx, key);
        else ctx.stdout.write(`${key.keyId} ${key.status}\n`);
      });
  }
}
