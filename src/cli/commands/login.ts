import type { Command } from 'commander';
import { ApiClient } from '../client.js';
import { WfxClient } from '../../client/client.js';
import { globals, printJson, type CliContext } from '../context.js';
import { resolveConnection, storeCredential } from '../credentials.js';
import { WfxError } from '../../shared/errors.js';

/** `wfx login`: check a key against a daemon and keep it for that URL. `wfx tui`: the operator console. */
export function registerLogin(program: Command, ctx: CliContext): void {
  program
    .command('login')
    .description('check an API key against the daemon and keep it for its URL (OS keyring, else a 0600 file)')
    .option('--api-key <key>', 'the key (or WFX_API_KEY)')
    .addHelpText('after', '\nExample:\n  $ wfx login --url https://wfx.example.com --api-key apk_...')
    .action(async (opts: { apiKey?: string }, cmd: Command) => {
      const g = globals(cmd);
      const key = opts.apiKey ?? g.apiKey ?? ctx.env.WFX_API_KEY;
      if (!key) throw new WfxError('USAGE_ERROR', 'pass --api-key (or set WFX_API_KEY)');
      const { url } = await resolveConnection(ctx, { ...g, apiKey: key });
      const me = await new ApiClient({ url, apiKey: key, credentialSource: '--api-key' }).get<{ keyId?: string; organization: string | null }>('/auth/whoami');
      const { where } = await storeCredential(ctx.env, url, key);
      if (g.json) printJson(ctx, { url, keyId: me.keyId, organization: me.organization, storedIn: where });
      else ctx.stdout.write(`logged in to ${url} as key ${me.keyId} (${me.organization ?? 'system'}); kept in ${where}\n`);
    });

  program
    .command('tui')
    .description('the operator console: executions live, waiting tasks answered with a form, flows and their runs, trigger health (keys: ? for help, q to quit)')
    .addHelpText('after', '\nExample:\n  $ wfx tui --url http://127.0.0.1:7878')
    .action(async (_opts: unknown, cmd: Command) => {
      if (!process.stdout.isTTY || !process.stdin.isTTY) throw new WfxError('USAGE_ERROR', 'wfx tui needs a terminal (stdin and stdout a TTY)');
      const connection = await resolveConnection(ctx, globals(cmd));
      // Ink draws only the last frame when it believes it runs in CI (a CI variable is set); the
      // TTY check above says a person is watching, so it must draw every frame. Set before Ink loads.
      process.env.CI = 'false';
      const { runTui } = await import('../../tui/run.js'); // React and Ink load only here
      await runTui(new WfxClient(connection), connection.url);
    });
}
