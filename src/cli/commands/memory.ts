import type { Command } from 'commander';
import type { MemoryItem } from '../../shared/api/index.js';
import { clientFor } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';
import { orgOf, orgOption, wholeFromOne } from '../options.js';

/** The most entries one request asks for (the route's own maximum). */
const PAGE = 1000;

/** `wfx memory list|namespaces|get|delete`: what memoryActions and aiTasks' chat memory remember. */
export function registerMemory(program: Command, ctx: CliContext): void {
  const memory = program
    .command('memory')
    .description('durable memory of memoryAction and aiTask chat memory, per organization (needs ADMIN)');

  memory
    .command('list')
    .description('live entries (not their values), by namespace then key')
    .option('--namespace <namespace>', 'one namespace only')
    .option('--prefix <prefix>', 'keys that start with this')
    .option('--limit <n>', 'at most this many entries', wholeFromOne, 100)
    .addOption(orgOption())
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx memory list --namespace chat\n  $ wfx memory list --prefix customer- --json',
    )
    .action(async (opts: { namespace?: string; prefix?: string; limit: number; org?: string }, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const items: MemoryItem[] = [];
      let cursor: string | undefined;
      let more = false;
      // Pages until the limit: each request bounded, the loop bounded by the limit.
      do {
        const page = await client.memory.list({
          namespace: opts.namespace,
          prefix: opts.prefix,
          limit: Math.min(PAGE, opts.limit - items.length),
          cursor,
          ...orgOf(opts),
        });
        items.push(...page.items);
        cursor = page.nextCursor ?? undefined;
        more = cursor !== undefined;
      } while (more && items.length < opts.limit);
      if (globals(cmd).json) return printJson(ctx, items);
      ctx.stdout.write(
        table(
          ['NAMESPACE', 'KEY', 'SIZE', 'UPDATED', 'EXPIRES'],
          items.map((i) => [i.namespace, i.key, `${i.size} B`, i.updatedAt, i.expiresAt ?? 'never']),
        ),
      );
      if (more)
        ctx.stderr.write(`more than ${opts.limit} entries: narrow with --namespace or --prefix, or raise --limit\n`);
    });

  memory
    .command('namespaces')
    .description('namespaces with how many live entries each holds, and their bytes')
    .addOption(orgOption())
    .addHelpText('after', '\nExample:\n  $ wfx memory namespaces --json')
    .action(async (opts: { org?: string }, cmd: Command) => {
      const { items } = await (await clientFor(ctx, cmd)).memory.namespaces(orgOf(opts));
      if (globals(cmd).json) return printJson(ctx, items);
      ctx.stdout.write(
        table(
          ['NAMESPACE', 'ENTRIES', 'SIZE'],
          items.map((n) => [n.namespace, String(n.entries), `${n.bytes} B`]),
        ),
      );
    });

  memory
    .command('get')
    .argument('<namespace>')
    .argument('<key>')
    .description("an entry's value (--json: with when it was written and expires)")
    .addOption(orgOption())
    .addHelpText('after', '\nExample:\n  $ wfx memory get chat customer-42')
    .action(async (namespace: string, key: string, opts: { org?: string }, cmd: Command) => {
      const entry = await (await clientFor(ctx, cmd)).memory.get(namespace, key, orgOf(opts));
      if (globals(cmd).json) return printJson(ctx, entry);
      printJson(ctx, entry.value);
    });

  memory
    .command('delete')
    .argument('<namespace>')
    .argument('<key>')
    .description('forget an entry')
    .addOption(orgOption())
    .addHelpText('after', '\nExample:\n  $ wfx memory delete chat customer-42')
    .action(async (namespace: string, key: string, opts: { org?: string }, cmd: Command) => {
      const res = await (await clientFor(ctx, cmd)).memory.delete(namespace, key, orgOf(opts));
      if (globals(cmd).json) printJson(ctx, res);
      else ctx.stdout.write(`${namespace} ${key} deleted\n`);
    });
}
