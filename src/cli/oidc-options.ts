// The OIDC flags of the commands that run a daemon (`wfx daemon start`, `wfx dev`): bearer
// tokens from an issuer (SPEC.md section 6) and the console's sign-in client (section 10), and
// the address browsers reach the daemon at (`--public-url`), which the console's sign-in needs.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { DaemonOptions } from '../daemon/process/launcher.js';
import { WfxError, errorMessage } from '../shared/errors.js';
import type { CliContext } from './context.js';
import { parseAdvertiseUrl } from './daemon-options.js';

/** The OIDC flags as commander parses them. */
export interface OidcFlags {
  readonly oidcIssuer?: string;
  readonly oidcAudience?: string;
  readonly oidcOrgClaim?: string;
  readonly oidcClientId?: string;
  readonly oidcClientSecretFile?: string;
  readonly oidcScopes?: string;
  readonly publicUrl?: string;
}

/** Adds the OIDC flags to a command that runs a daemon. */
export function addOidcFlags(command: Command): Command {
  return command
    .option('--oidc-issuer <url>', 'also accept bearer JWTs from this OIDC issuer (needs --oidc-audience)')
    .option('--oidc-audience <aud>', 'the audience bearer tokens must carry')
    .option('--oidc-org-claim <claim>', 'the token claim naming the organization', 'org_id')
    .option('--oidc-client-id <id>', "the console's OIDC client at the issuer: sign-in through /auth/callback")
    .option(
      '--oidc-client-secret-file <file>',
      "a confidential client's secret, read from this file (or $WFX_OIDC_CLIENT_SECRET); none: a public client",
    )
    .option('--oidc-scopes <scopes>', 'the scopes the console asks for (default "openid profile email offline_access")')
    .option(
      '--public-url <url>',
      'where browsers and webhook senders reach the daemon, behind a proxy or tunnel (console links, OIDC redirects, webhook URLs)',
      parseAdvertiseUrl,
    );
}

/** The DaemonOptions of the OIDC flags; USAGE_ERROR for flags that do not go together or a secret file that cannot be read. */
export function oidcOptions(
  ctx: CliContext,
  opts: OidcFlags,
): Pick<DaemonOptions, 'oidc' | 'oidcClient' | 'publicUrl'> {
  return { ...(opts.publicUrl !== undefined && { publicUrl: opts.publicUrl }), ...issuerOptions(ctx, opts) };
}

function issuerOptions(ctx: CliContext, opts: OidcFlags): Pick<DaemonOptions, 'oidc' | 'oidcClient'> {
  if ((opts.oidcIssuer === undefined) !== (opts.oidcAudience === undefined))
    throw new WfxError('USAGE_ERROR', '--oidc-issuer and --oidc-audience go together');
  const client = opts.oidcClientId !== undefined;
  if (!client && (opts.oidcClientSecretFile !== undefined || opts.oidcScopes !== undefined))
    throw new WfxError('USAGE_ERROR', '--oidc-client-secret-file and --oidc-scopes need --oidc-client-id');
  if (client && opts.oidcIssuer === undefined)
    throw new WfxError('USAGE_ERROR', '--oidc-client-id needs --oidc-issuer and --oidc-audience');
  if (opts.oidcIssuer === undefined) return {};
  const clientSecret = client ? secretOf(ctx, opts.oidcClientSecretFile) : undefined;
  return {
    oidc: { issuer: opts.oidcIssuer, audience: opts.oidcAudience!, orgClaim: opts.oidcOrgClaim },
    ...(client && {
      oidcClient: {
        clientId: opts.oidcClientId!,
        ...(clientSecret !== undefined && { clientSecret }),
        ...(opts.oidcScopes !== undefined && { scopes: opts.oidcScopes }),
      },
    }),
  };
}

/** The OIDC flags again, for the command line of a daemon started in the background (the secret by its file; the variable is inherited). */
export function oidcArgs(ctx: CliContext, opts: OidcFlags): string[] {
  const args: string[] = [];
  if (opts.oidcIssuer !== undefined) args.push('--oidc-issuer', opts.oidcIssuer);
  if (opts.oidcAudience !== undefined) args.push('--oidc-audience', opts.oidcAudience);
  if (opts.oidcOrgClaim !== undefined) args.push('--oidc-org-claim', opts.oidcOrgClaim);
  if (opts.oidcClientId !== undefined) args.push('--oidc-client-id', opts.oidcClientId);
  if (opts.oidcClientSecretFile !== undefined)
    args.push('--oidc-client-secret-file', resolve(ctx.cwd, opts.oidcClientSecretFile));
  if (opts.oidcScopes !== undefined) args.push('--oidc-scopes', opts.oidcScopes);
  if (opts.publicUrl !== undefined) args.push('--public-url', opts.publicUrl);
  return args;
}

function secretOf(ctx: CliContext, file: string | undefined): string | undefined {
  if (file === undefined) {
    const fromEnv = ctx.env.WFX_OIDC_CLIENT_SECRET;
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  }
  let secret: string;
  try {
    secret = readFileSync(resolve(ctx.cwd, file), 'utf8').trim();
  } catch (err) {
    throw new WfxError('USAGE_ERROR', `--oidc-client-secret-file: ${errorMessage(err)}`);
  }
  if (secret === '') throw new WfxError('USAGE_ERROR', `--oidc-client-secret-file: ${file} is empty`);
  return secret;
}
