/**
 * The commands each named thing of the catalogue has alike (AI providers, domains, email
 * connections, API keys, webhooks): `list`, its items as a table, and `get`, `show`, `delete`
 * (and the like) of one by name, the daemon's answer in words; each as JSON with --json. What
 * differs (the client call, the columns, the words) is given; the rest is written once.
 */
import type { Command } from 'commander';
import type { WfxClient } from '../client/client.js';
import { clientFor } from './api.js';
import { globals, printJson, type CliContext } from './context.js';
import { orgOption } from './options.js';

/** The options of a command with `--org` (`withOrg`); without it, an empty object. */
export interface OrgFlag {
  readonly org?: string;
}

/** What a list or delete command says of itself. */
interface CommandSpec {
  readonly description: string;
  /** Its example, as the help shows it (`$ wfx ...`). */
  readonly example: string;
  /** Whether it takes `--org` (system keys name an organization). */
  readonly withOrg?: boolean;
}

/** `command` with its description, `--org` when it takes it, and its example. */
function described(command: Command, spec: CommandSpec): Command {
  command.description(spec.description);
  if (spec.withOrg) command.addOption(orgOption());
  return command.addHelpText('after', `\nExample:\n  ${spec.example}`);
}

/** Adds `list` to `parent`: `list(client, opts)`'s items, as JSON with --json, else as `table` writes them. */
export function addListCommand<T>(
  parent: Command,
  ctx: CliContext,
  spec: CommandSpec & {
    readonly list: (client: WfxClient, opts: OrgFlag) => Promise<{ readonly items: readonly T[] }>;
    readonly table: (items: readonly T[]) => string;
  },
): void {
  described(parent.command('list'), spec).action(async (opts: OrgFlag, cmd: Command) => {
    const { items } = await spec.list(await clientFor(ctx, cmd), opts);
    if (globals(cmd).json) return printJson(ctx, items);
    ctx.stdout.write(spec.table(items));
  });
}

/**
 * Adds `<verb> <name>` to `parent` (get, show, test, delete): `call(client, name, opts)`'s
 * answer, as JSON with --json, else as `human(answer, name)` writes it.
 */
export function addNamedCommand<T>(
  parent: Command,
  ctx: CliContext,
  verb: string,
  spec: CommandSpec & {
    readonly call: (client: WfxClient, name: string, opts: OrgFlag) => Promise<T>;
    readonly human: (answer: T, name: string) => string;
  },
): void {
  described(parent.command(verb).argument('<name>'), spec).action(async (name: string, opts: OrgFlag, cmd: Command) => {
    const answer = await spec.call(await clientFor(ctx, cmd), name, opts);
    if (globals(cmd).json) printJson(ctx, answer);
    else ctx.stdout.write(spec.human(answer, name));
  });
}
