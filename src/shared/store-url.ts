/**
 * The `--store` connection string (`WFX_STORE`): checked by the CLI before a daemon starts, and
 * shown without its password wherever it is shown (logs, status).
 */
import { WfxError } from './errors.js';

/** Accepts `postgres://` and `postgresql://` URLs; says what else is wrong before anything connects. */
export function checkStoreUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not echoed: it may hold a password.
    throw new WfxError(
      'USAGE_ERROR',
      '--store takes a PostgreSQL URL (postgres://user@host:5432/db); this is not a URL',
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw new WfxError(
      'USAGE_ERROR',
      `--store takes a PostgreSQL URL (postgres://user@host:5432/db); ${parsed.protocol} is not one`,
    );
}

/** `url` without its password, for logs and status. */
export function redactStoreUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}
