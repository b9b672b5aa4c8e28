/* `wfx daemon secrets` and `wfx daemon rotate-secrets-key`: the keys that encrypt stored secrets (docs/operations.md, Secrets). */
import type { Command } from 'commander';
import type { SecretsKeyReport } from '../../shared/api/index.js';
import { clientFor } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';

/** The report as lines: the current key, where the keys are, and each key with what it seals. */
function reportLines(r: SecretsKeyReport): string {
  const rows = r.keys.map((k) => [
    k.keyId,
    String(k.secrets),
    k.keyId === r.keyId
      ? 'current: seals new secrets'
      : !k.held
        ? 'MISSING: put it back in the key file'
        : k.secrets === 0
          ? 'unused: remove it once no backup you keep needs it'
          : 'in use: rotate to stop using it',
  ]);
  const plain = r.plain > 0 ? `\n${r.plain} secret(s) still in plain text: a restart encrypts them\n` : '';
  return `keys kept in ${r.where}\n\n${table(['KEY', 'SECRETS', ''], rows)}${plain}`;
}

/** `wfx daemon secrets`: GET /admin/secrets. */
export async function showSecrets(ctx: CliContext, cmd: Command): Promise<void> {
  const r = await (await clientFor(ctx, cmd)).admin.secrets();
  if (globals(cmd).json) printJson(ctx, r);
  else ctx.stdout.write(reportLines(r));
}

/** `wfx daemon rotate-secrets-key [--key-id ID]`: POST /admin/secrets/rotate. */
export async function rotateSecrets(ctx: CliContext, cmd: Command, keyId: string | undefined): Promise<void> {
  const r = await (await clientFor(ctx, cmd)).admin.rotateSecrets(keyId);
  if (globals(cmd).json) return printJson(ctx, r);
  ctx.stdout.write(
    `sealed ${r.resealed} secret(s) with key ${r.keyId}${r.added ? ` (added to ${r.where})` : ''}` +
      `${r.unreadable > 0 ? `; ${r.unreadable} could not be opened (see the daemon log)` : ''}\n\n${reportLines(r)}`,
  );
}

/** The line `wfx daemon backup` adds: the keys are not in the copy, and where they are. */
export function backupKeyLine(key: { readonly where: string; readonly keyIds: readonly string[] }): string {
  return (
    `not in the copy: the secrets key${key.keyIds.length === 1 ? '' : 's'} ${key.keyIds.join(', ')} (${key.where}). ` +
    'Keep a copy of it apart from the backup: without it the backup starts with SECRETS_KEY_MISSING.\n'
  );
}
