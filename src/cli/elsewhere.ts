/* A daemon that serves the URL the CLI talks to, for another directory than the one it works on: said so, with how to reach it. */
import { runningDaemon } from '../daemon/process/launcher.js';
import { dataDirOf, type CliContext, type GlobalOptions } from './context.js';
import { fallbackUrl } from './credentials.js';

/** How long the probe waits for GET /health: a daemon that answers at all answers at once on loopback. */
const PROBE_MS = 2000;

/** A wfx daemon that answers GET /health at a URL (its version), found by `daemonElsewhere`. */
export interface DaemonElsewhere {
  readonly url: string;
  readonly version: string;
}

/**
 * The daemon serving the configured URL (--url, WFX_URL, else WFX_DEFAULT_URL or the default) when none runs on
 * the data directory the command works on, so it serves another: null when one runs here, or
 * when no wfx daemon answers there.
 */
export async function daemonElsewhere(ctx: CliContext, opts: GlobalOptions): Promise<DaemonElsewhere | null> {
  if ((await runningDaemon(dataDirOf(ctx, opts))) !== null) return null;
  const url = (opts.url ?? ctx.env.WFX_URL ?? fallbackUrl(ctx.env)).replace(/\/+$/, '');
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(PROBE_MS) });
    const body = (await res.json()) as { status?: unknown; version?: unknown };
    if (typeof body.version !== 'string' || (body.status !== 'ok' && body.status !== 'standby')) return null;
    return { url, version: body.version };
  } catch {
    return null;
  }
}

/** What the CLI says of a daemon found by `daemonElsewhere`: where it serves and the ways to reach it. */
export function elsewhereText(d: DaemonElsewhere, dataDir: string): string {
  return (
    `a wfx daemon (version ${d.version}) serves ${d.url} for another directory than ${dataDir}\n` +
    `reach it with --url ${d.url} and --api-key KEY (or WFX_API_KEY=KEY, or \`wfx login --url ${d.url} --api-key KEY\`), ` +
    `with a key of that daemon (its data directory's bootstrap.key, or \`wfx keys create\` there), ` +
    `or cd to the directory it serves`
  );
}
