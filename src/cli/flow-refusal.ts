/** How the CLI shows a flow the daemon refused: each problem at file:line:column, as `flow validate` does. */
import { isWfxError, type WfxError } from '../shared/errors.js';
import { formatProblem, type FlowProblem } from '../shared/flow/validate.js';
import { printJson, type CliContext } from './context.js';
import { exitCodeFor } from './exit-codes.js';

/** The problems a FLOW_INVALID refusal carries (`details.problems`); none for any other error. */
export function refusalProblems(err: unknown): readonly FlowProblem[] {
  if (!isWfxError(err, 'FLOW_INVALID')) return [];
  return ((err.details as { problems?: FlowProblem[] } | undefined)?.problems ?? []) as FlowProblem[];
}

/**
 * Reports the daemon's refusal of flow file `file` and sets the exit code: on stderr each problem
 * as `file:line:column: ...`, then `CODE: message` and the hint; with `json`, also the error as
 * `instances move` gives its refusal, `{error, message, problems}` on stdout.
 */
export function reportRefusedFlow(ctx: CliContext, file: string, err: WfxError, json: boolean): void {
  const problems = refusalProblems(err);
  if (json) printJson(ctx, { error: err.code, message: err.message, problems });
  for (const p of problems) ctx.stderr.write(`${formatProblem(file, p)}\n`);
  ctx.stderr.write(`${err.code}: ${err.message}\n`);
  if (err.hint) ctx.stderr.write(`hint: ${err.hint}\n`);
  ctx.exitCode = exitCodeFor(err.code);
}
