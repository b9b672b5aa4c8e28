import type { Command } from 'commander';
import { WfxClient } from '../../client/client.js';
import { globals, printJson, type CliContext } from '../context.js';
import { resolveConnection, storeCredential } from '../credentials.js';
import { WfxError } from '../../shared/errors.js';

/** `wfx login`: check a key against a daemon and keep it for that URL. */
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
      const me = await new WfxClient({ url, apiKey: key, credentialSource: '--api-key' }).auth.whoami();
      const { where } = await storeCredential(ctx.env, url, key);
      if (g.json) printJson(ctx, { url, keyId: me.keyId, organization: me.organization, storedIn: where });
      else
        ctx.stdout.write(`logged in to ${url} as key ${me.keyId} (${me.organization ?? 'system'}); kept in ${where}\n`);
    });
}
