import type { Command } from 'commander';
import type { AuditEntry, AuditListQuery } from '../../shared/api/index.js';
import { clientFor } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';
import { givenOnly, wholeFromOne } from '../options.js';

/** How often `wfx audit --follow` asks for new records. */
const FOLLOW_EVERY_MS = 2000;

interface AuditOptions {
  readonly limit: number;
  readonly actor?: string;
  readonly action?: string;
  readonly target?: string;
  readonly since?: string;
  readonly until?: string;
  readonly org?: string;
  readonly follow?: boolean;
}

/** One line of the table: when, who, what, on what, from where. Pure. */
export function auditRow(e: AuditEntry): string[] {
  const targets = Object.entries(e.targets)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return [e.at, e.organization ?? '-', e.actor, e.action, String(e.status), targets || '-', e.remote ?? '-'];
}

const HEAD = ['AT', 'ORGANIZATION', 'ACTOR', 'ACTION', 'STATUS', 'TARGETS', 'FROM'];

/** `wfx audit`: the audit trail (GET /admin/audit), newest first; `--follow` prints new records as they come. */
export function registerAudit(program: Command, ctx: CliContext): void {
  program
    .command('audit')
    .description('who changed what through the API: the audit trail, newest first (needs ADMIN)')
    .option('--limit <n>', 'at most this many', wholeFromOne, 100)
    .option('--actor <actor>', 'key:<keyId>, oidc:<subject>, or a bare key id or subject')
    .option('--action <text>', 'actions containing this text (e.g. "POST /admin/api-keys", cancel, DELETE)')
    .option('--target <id>', 'records naming this id (an execution, a key, a webhook, a flow...)')
    .option('--since <time>', 'records at or after this ISO time')
    .option('--until <time>', 'records at or before this ISO time')
    .option('--org <organization>', 'system keys: one organization (default: all)')
    .option('--follow', 'then print new records as they come (oldest first), until Ctrl-C')
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx audit --actor key:3f2a9c1d --since 2026-11-01T00:00:00Z\n  $ wfx audit --follow',
    )
    .action(async (opts: AuditOptions, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const json = globals(cmd).json;
      const filters: AuditListQuery = givenOnly({
        actor: opts.actor,
        action: opts.action,
        target: opts.target,
        since: opts.since,
        until: opts.until,
        organization: opts.org,
      });
      const items: AuditEntry[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.admin.audit({ ...filters, limit: Math.min(1000, opts.limit - items.length), cursor });
        items.push(...page.items);
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined && items.length < opts.limit);
      if (json && !opts.follow) return printJson(ctx, items);
      const print = (entries: readonly AuditEntry[]): void => {
        if (json) for (const e of entries) ctx.stdout.write(`${JSON.stringify(e)}\n`);
        else if (entries.length > 0) ctx.stdout.write(table(HEAD, entries.map(auditRow)));
      };
      print(opts.follow ? items.slice().reverse() : items);
      if (!opts.follow) return;
      // New records are those above the newest seen: the first page, newest first, down to it.
      let newest = items[0]?.id;
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, FOLLOW_EVERY_MS));
        const page = await client.admin.audit({ ...filters, limit: 1000 });
        const at = newest === undefined ? -1 : page.items.findIndex((e) => e.id === newest);
        const fresh = at < 0 ? page.items : page.items.slice(0, at);
        if (fresh.length > 0) newest = fresh[0]!.id;
        print(fresh.slice().reverse());
      }
    });
}
