import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { WfxError } from '../shared/errors.js';
import { resolveDataDir } from '../shared/data-dir.js';

/** Options every command accepts (SPEC.md section 8). */
export interface GlobalOptions {
  readonly url?: string;
  readonly apiKey?: string;
  readonly dataDir?: string;
  readonly json?: boolean;
  readonly color?: boolean;
}

/** What a command needs from the outside world; tests and the wiring pass it in. */
export interface CliContext {
  /** Standard input (a password with --password-stdin; a TTY check for the TUI). */
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Path of bin/wfx.js, to start a background daemon with the same code. */
  readonly binPath: string;
  /** The exit code the command chose (default 0). */
  exitCode: number;
}

/** The global options, read from the root command. */
export function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>();
}

/** The data directory the command works on (flag, env, `.wfx` upward, `./.wfx`). */
export function dataDirOf(ctx: CliContext, opts: GlobalOptions): string {
  return resolveDataDir(opts.dataDir, ctx.env, ctx.cwd);
}

/** Writes one JSON document (machine output) to stdout. */
export function printJson(ctx: CliContext, value: unknown): void {
  ctx.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Whether to colour output on `stream`: only on a TTY, never with NO_COLOR or --no-color. */
export function useColor(ctx: CliContext, opts: GlobalOptions, stream: { isTTY?: boolean } = ctx.stdout): boolean {
  return opts.color !== false && !ctx.env.NO_COLOR && stream.isTTY === true;
}

/** Reads a file the user named (relative to the working directory); USAGE_ERROR saying which and why. */
export async function readUserFile(ctx: CliContext, file: string, what?: string): Promise<Buffer> {
  try {
    return await readFile(resolve(ctx.cwd, file));
  } catch (err) {
    throw new WfxError(
      'USAGE_ERROR',
      `cannot read ${what ? `${what} ` : ''}${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}
