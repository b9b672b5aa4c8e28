/**
 * A handler that runs a program per job, in any language: the job (its key, action, input,
 * attempt, ...) as JSON on stdin, the output as JSON on stdout, the exit code as the verdict.
 * Run with execa from an argument array, never through a shell
 * (docs/decisions/029-execa-not-for-the-launcher.md); the program is killed when the job is no
 * longer the worker's.
 */
import { execa, parseCommandString } from 'execa';
import { JobError } from './job-error.js';
import type { JobContext, JobHandler } from './worker.js';

/** The most output a program may print. */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/**
 * A handler running `command` (a program and its arguments, split as a shell would split plain
 * words, no shell features) in `cwd`. Exit 0: stdout is the output (JSON; empty: null). Any
 * other exit fails the attempt: with `{errorCode, errorMessage, retry}` from stdout when it
 * printed that as JSON, else COMMAND_FAILED with the exit code and the end of stderr. Output
 * that is not JSON fails with COMMAND_OUTPUT_INVALID.
 */
export function commandHandler(command: string, options: { readonly cwd?: string } = {}): JobHandler {
  const [file, ...args] = parseCommandString(command);
  if (file === undefined) throw new TypeError('the command is empty');
  return async (_input, job: JobContext) => {
    const { signal, worker, ...rest } = job;
    const r = await execa(file, args, {
      input: JSON.stringify({ ...rest, worker }),
      cancelSignal: signal,
      reject: false,
      maxBuffer: MAX_OUTPUT_BYTES,
      ...(options.cwd !== undefined && { cwd: options.cwd }),
    });
    if (r.isCanceled) throw new Error('cancelled: the job is no longer this worker’s');
    const stdout = String(r.stdout ?? '').trim();
    if (r.exitCode === 0) {
      if (stdout === '') return null;
      try {
        return JSON.parse(stdout) as unknown;
      } catch {
        throw new JobError('COMMAND_OUTPUT_INVALID', `${file} printed no JSON: ${stdout.slice(0, 200)}`);
      }
    }
    const said = parseFailure(stdout);
    if (said) throw said;
    const stderr = String(r.stderr ?? '')
      .trim()
      .slice(-2000);
    const why = r.exitCode === undefined ? `was killed (${r.signal ?? 'unknown signal'})` : `exited with ${r.exitCode}`;
    throw new JobError('COMMAND_FAILED', `${file} ${why}${stderr ? `: ${stderr}` : ''}`);
  };
}

/** A failure the program printed as `{errorCode, errorMessage, retry}`, or null. */
function parseFailure(stdout: string): JobError | null {
  try {
    const v = JSON.parse(stdout) as { errorCode?: unknown; errorMessage?: unknown; retry?: unknown };
    if (typeof v.errorCode !== 'string') return null;
    return new JobError(v.errorCode, typeof v.errorMessage === 'string' ? v.errorMessage : v.errorCode, {
      retry: v.retry !== false,
    });
  } catch {
    return null;
  }
}
