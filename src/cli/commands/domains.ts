import type { Command } from 'commander';
import type { RegisterDomainBody } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { clientFor } from '../api.js';
import { globals, printJson, readUserFile, type CliContext } from '../context.js';
import { table } from '../format.js';
import { orgOf, orgOption } from '../options.js';
import { addListCommand, addNamedCommand } from '../named-commands.js';

/** A domain file (YAML or JSON): `{description?, actions: {name: {description?, input?, output?}}}`. Throws USAGE_ERROR. */
async function readDomainFile(ctx: CliContext, file: string): Promise<RegisterDomainBody> {
  const text = (await readUserFile(ctx, file, 'domain file')).toString('utf8');
  let value: unknown;
  try {
    const { parse } = await import('yaml');
    value = parse(text);
  } catch (err) {
    throw new WfxError('USAGE_ERROR', `${file} is not YAML or JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new WfxError('USAGE_ERROR', `${file} holds no domain: expected {description, actions: {...}}`);
  const { name: _name, ...body } = value as Record<string, unknown>;
  return body as unknown as RegisterDomainBody;
}

/** `wfx domains register|list|show|delete`: what external workers do for domainTasks. */
export function registerDomains(program: Command, ctx: CliContext): void {
  const domains = program
    .command('domains')
    .description("domains of workers: each action's input and output schemas (register: WORKFLOW_PUBLISH)");

  domains
    .command('register')
    .argument('<name>', 'the domain name (domainTask `domain:`)')
    .requiredOption('--file <file>', 'the domain: YAML or JSON with actions and their input and output JSON Schemas')
    .description('register a domain, or replace it whole (refused while an action it drops has jobs waiting)')
    .addOption(orgOption())
    .addHelpText('after', '\nExample:\n  $ wfx domains register billing --file billing.domain.yaml')
    .action(async (name: string, opts: { file: string; org?: string }, cmd: Command) => {
      const body = await readDomainFile(ctx, opts.file);
      const d = await (await clientFor(ctx, cmd)).domains.register(name, body, orgOf(opts));
      if (globals(cmd).json) return printJson(ctx, d);
      ctx.stdout.write(`domain ${d.name} registered in ${d.organization}: ${Object.keys(d.actions).join(', ')}\n`);
    });

  addListCommand(domains, ctx, {
    description: 'the domains and their actions',
    example: '$ wfx domains list --json',
    withOrg: true,
    list: (client, opts) => client.domains.list(orgOf(opts)),
    table: (items) =>
      table(
        ['DOMAIN', 'ORGANIZATION', 'ACTIONS', 'UPDATED'],
        items.map((d) => [d.name, d.organization, Object.keys(d.actions).join(', '), d.updatedAt]),
      ),
  });

  addNamedCommand(domains, ctx, 'show', {
    description: "a domain: its actions' input and output schemas",
    example: '$ wfx domains show billing',
    withOrg: true,
    call: (client, name, opts) => client.domains.get(name, orgOf(opts)),
    human: (d) =>
      `${d.name} (${d.organization})${d.description ? `: ${d.description}` : ''}\n` +
      Object.entries(d.actions)
        .map(
          ([action, a]) =>
            `\n  ${action}${a.description ? `: ${a.description}` : ''}\n` +
            `    input:  ${JSON.stringify(a.input)}\n    output: ${JSON.stringify(a.output)}\n`,
        )
        .join(''),
  });

  addNamedCommand(domains, ctx, 'delete', {
    description: 'delete a domain (refused while jobs of it wait)',
    example: '$ wfx domains delete billing',
    withOrg: true,
    call: (client, name, opts) => client.domains.delete(name, orgOf(opts)),
    human: (_answer, name) => `domain ${name} deleted\n`,
  });
}
