import { InvalidArgumentError } from 'commander';
import { parseCidrList, type DaemonOptions } from '../daemon/launcher.js';
import { parseDuration } from '../shared/duration.js';
import type { CliContext } from './context.js';

// The option parsers of the commands that run a daemon (`wfx daemon start`, `wfx dev`).

/** commander's parser of a `--port` value: 0 to 65535, else a usage error (exit 2). */
export function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError('must be a port number from 0 to 65535');
  return n;
}

/** A `--retention` value: a positive number, else a usage error. */
export function parsePositive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
}

/** A --max-json-depth value: a whole number from 1 to 10,000 (deeper would overflow what recurses over the data). */
export function parseDepth(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 10_000)
    throw new InvalidArgumentError('must be a whole number from 1 to 10000');
  return n;
}

/** `--max-file-size`: megabytes (MiB, fractions allowed) as bytes, from 1 KiB to 4 GiB. */
export function parseMegabytes(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n * 1024 < 1 || n > 4096)
    throw new InvalidArgumentError('must be a number of megabytes from 0.001 to 4096');
  return Math.floor(n * 1024 * 1024);
}

/** `--webhook-replay-window`: a duration (72h, 3d, PT72H) in milliseconds. */
export function parseReplayWindow(value: string): number {
  try {
    const ms = parseDuration(value);
    if (ms > 0) return ms;
  } catch {
    // reported below
  }
  throw new InvalidArgumentError('must be a positive duration, e.g. 72h or 3d');
}

/** `--http-deny`/`--http-allow`: a comma-separated list of CIDRs, checked, kept as given. */
function parseCidrs(value: string, what: string): string {
  try {
    parseCidrList(value, what);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  return value;
}
/** `--http-deny`'s parser. */
export const parseDeny = (value: string): string => parseCidrs(value, '--http-deny');
/** `--http-allow`'s parser. */
export const parseAllow = (value: string): string => parseCidrs(value, '--http-allow');

/**
 * The network policy and replay window options of `daemon start` and `dev`: a flag, else its
 * environment variable (WFX_HTTP_DENY, WFX_HTTP_ALLOW). Throws USAGE_ERROR on a malformed CIDR.
 */
export function safetyOptions(
  ctx: CliContext,
  opts: { webhookReplayWindow?: number; httpDeny?: string; httpAllow?: string },
): Pick<DaemonOptions, 'webhookReplayWindowMs' | 'httpDeny' | 'httpAllow'> {
  return {
    webhookReplayWindowMs: opts.webhookReplayWindow,
    httpDeny: parseCidrList(
      opts.httpDeny ?? ctx.env.WFX_HTTP_DENY,
      opts.httpDeny === undefined ? 'WFX_HTTP_DENY' : '--http-deny',
    ),
    httpAllow: parseCidrList(
      opts.httpAllow ?? ctx.env.WFX_HTTP_ALLOW,
      opts.httpAllow === undefined ? 'WFX_HTTP_ALLOW' : '--http-allow',
    ),
  };
}
