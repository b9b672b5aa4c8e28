import { InvalidArgumentError, Option, type Command } from 'commander';
import { MAX_START_WAIT_SECONDS } from '../../shared/api/index.js';
import { clientFor } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';

/** The clients whose configuration `wfx mcp` writes, and how each names an HTTP server. */
const CLIENTS = ['json', 'vscode', 'claude-code', 'claude-desktop'] as const;
type McpClient = (typeof CLIENTS)[number];

/** Where the key goes when none is made: the client's configuration takes it from there. */
const KEY_PLACEHOLDER = '${WFX_API_KEY}';

interface McpOptions {
  client: McpClient;
  newKey?: string;
  org?: string;
  environment?: string;
  wait?: number;
  name: string;
}

const seconds = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > MAX_START_WAIT_SECONDS)
    throw new InvalidArgumentError(`must be a whole number of seconds, 0 to ${MAX_START_WAIT_SECONDS}`);
  return n;
};

/** `wfx mcp`: what an MCP client's configuration needs to call this daemon's flows as tools. */
export function registerMcp(program: Command, ctx: CliContext): void {
  program
    .command('mcp')
    .description('print the configuration an MCP client (an AI assistant, an IDE) needs to call flows as tools')
    .addOption(new Option('--client <client>', 'the configuration to print').choices(CLIENTS).default('json'))
    .option('--new-key <name>', 'create an operator key for the client (needs ADMIN) and put it in the configuration')
    .option('--org <organization>', "the new key's organization (system admins; default: yours)")
    .addOption(
      new Option('--environment <env>', 'the flow versions the tools run').choices(['PRODUCTION', 'DEVELOPMENT']),
    )
    .option('--wait <seconds>', 'how long a call waits for its flow to end (default 50)', seconds)
    .option('--name <name>', 'the server name in the configuration', 'wfx')
    .addHelpText(
      'after',
      '\nEach published flow with inputs: is a tool; a call runs the flow and answers with its result.\n' +
        `Without --new-key, the configuration reads the key from ${KEY_PLACEHOLDER}: give the client an\n` +
        'operator key of its own (wfx keys create --name claude --role operator), never your admin key.\n' +
        'Formats: json (the mcpServers map Cursor, Windsurf and most clients read), vscode (.vscode/mcp.json),\n' +
        'claude-code (a `claude mcp add` command), claude-desktop (through the mcp-remote bridge).\n' +
        'Examples:\n  $ wfx mcp --new-key claude-code --client claude-code\n  $ wfx mcp --client vscode --environment DEVELOPMENT > .vscode/mcp.json',
    )
    .action(async (opts: McpOptions, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const url = new URL('/mcp', client.connection.url);
      if (opts.environment !== undefined) url.searchParams.set('environment', opts.environment);
      if (opts.wait !== undefined) url.searchParams.set('wait', String(opts.wait));
      let key = KEY_PLACEHOLDER;
      if (opts.newKey !== undefined) {
        const made = await client.keys.create({
          name: opts.newKey,
          role: 'operator',
          ...(opts.org !== undefined && { organization: opts.org }),
        });
        key = made.apiKey;
        ctx.stderr.write(
          `created key ${made.keyId} (operator, ${made.organization ?? 'system'}) for the client; it is in the configuration below, shown this once\n`,
        );
      }
      const headers = { 'X-API-Key': key };
      if (globals(cmd).json) return printJson(ctx, { url: url.href, headers });
      ctx.stdout.write(`${configuration(opts.client, opts.name, url.href, key)}\n`);
      if (opts.newKey === undefined)
        ctx.stderr.write(`set WFX_API_KEY to an operator key for the client (or run again with --new-key NAME)\n`);
    });
}

/** The text `client`'s configuration takes for the server `name` at `url` with `key`. Pure. */
export function configuration(client: McpClient, name: string, url: string, key: string): string {
  const json = (v: unknown) => JSON.stringify(v, null, 2);
  switch (client) {
    case 'json':
      return json({ mcpServers: { [name]: { type: 'http', url, headers: { 'X-API-Key': key } } } });
    case 'vscode':
      return json({ servers: { [name]: { type: 'http', url, headers: { 'X-API-Key': key } } } });
    case 'claude-code': {
      // The placeholder in double quotes, for the shell to put the variable's value there.
      const header = key === KEY_PLACEHOLDER ? '"X-API-Key: $WFX_API_KEY"' : shellWord(`X-API-Key: ${key}`);
      return `claude mcp add --transport http ${shellWord(name)} ${shellWord(url)} --header ${header}`;
    }
    case 'claude-desktop':
      // Claude Desktop's file starts local servers only: the mcp-remote bridge speaks HTTP for it.
      return json({
        mcpServers: {
          [name]: {
            command: 'npx',
            args: ['-y', 'mcp-remote', url, '--header', 'X-API-Key:${WFX_API_KEY}'],
            env: { WFX_API_KEY: key === KEY_PLACEHOLDER ? '<an operator key>' : key },
          },
        },
      });
  }
}

/** `s` as one word of a POSIX shell: as it is when it needs no quoting, else in single quotes. */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
