import type { Command } from 'commander';
import { WfxError } from '../../shared/errors.js';
import { clientFor, secretFromStdin } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';
import { addListCommand, addNamedCommand } from '../named-commands.js';

/** `wfx email-connections create|list|delete`. */
export function registerEmailConnections(program: Command, ctx: CliContext): void {
  const email = program.command('email-connections').description('IMAP mailboxes for email triggers (needs ADMIN)');
  email
    .command('create')
    .description('add an IMAP connection (the password is read from stdin with --password-stdin; never shown again)')
    .requiredOption('--name <name>')
    .requiredOption('--host <host>')
    .option('--port <port>', 'default 993 with TLS, else 143', (v) => Number(v))
    .requiredOption('--user <user>')
    .option('--password-stdin', 'read the password from standard input')
    .option('--tls', 'TLS from the start (default)')
    .option('--starttls', 'upgrade with STARTTLS')
    .option('--no-tls', 'no encryption (local test servers only)')
    .option('--mailbox <mailbox>', 'the mailbox to watch', 'INBOX')
    .addHelpText(
      'after',
      '\nExample:\n  $ printf %s "$IMAP_PASSWORD" | wfx email-connections create --name support --host imap.example.com --user support@example.com --password-stdin',
    )
    .action(
      async (
        opts: {
          name: string;
          host: string;
          port?: number;
          user: string;
          passwordStdin?: boolean;
          tls?: boolean;
          starttls?: boolean;
          mailbox: string;
        },
        cmd: Command,
      ) => {
        if (!opts.passwordStdin)
          throw new WfxError(
            'USAGE_ERROR',
            'pass the password on standard input with --password-stdin (never on the command line)',
          );
        const password = await secretFromStdin(ctx, 'password');
        const security = opts.starttls ? 'STARTTLS' : opts.tls === false ? 'NONE' : 'TLS';
        const res = await (
          await clientFor(ctx, cmd)
        ).emailConnections.create({
          name: opts.name,
          host: opts.host,
          ...(opts.port !== undefined && { port: opts.port }),
          user: opts.user,
          password,
          security,
          mailbox: opts.mailbox,
        });
        if (globals(cmd).json) printJson(ctx, res);
        else ctx.stdout.write(`email connection ${opts.name} added (${security})\n`);
      },
    );
  addListCommand(email, ctx, {
    description: 'IMAP connections (no passwords)',
    example: '$ wfx email-connections list --json',
    list: (client) => client.emailConnections.list(),
    table: (items) =>
      table(
        ['NAME', 'HOST', 'PORT', 'SECURITY', 'USER', 'MAILBOX'],
        items.map((c) => [c.name, c.host, String(c.port), c.security, c.user, c.mailbox]),
      ),
  });
  addNamedCommand(email, ctx, 'delete', {
    description: 'remove an IMAP connection',
    example: '$ wfx email-connections delete support',
    call: (client, name) => client.emailConnections.delete(name),
    human: (_answer, name) => `${name} deleted\n`,
  });
}
