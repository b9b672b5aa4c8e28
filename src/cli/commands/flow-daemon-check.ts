/** `wfx flow validate` against a daemon: what a publish would refuse there, asked as a dry run. */
import type { Command } from 'commander';
import { WfxClient } from '../../client/client.js';
import type { Environment } from '../../shared/api/index.js';
import { isWfxError } from '../../shared/errors.js';
import type { FlowProblem } from '../../shared/flow/validate.js';
import { globals, type CliContext } from '../context.js';
import { resolveConnection } from '../credentials.js';
import { refusalProblems } from '../flow-refusal.js';

/** One file as `flow validate` found it; `error`: a refusal other than problems (PROCESS_ID_CONFLICT). */
export interface ValidateResult {
  readonly file: string;
  ok: boolean;
  problems: readonly FlowProblem[];
  error?: string;
  readonly source: string;
}

/** Refusals of a publish that are the file's own problem, as `flow publish` counts them. */
const FILE_REFUSALS = new Set(['FLOW_INVALID', 'PAYLOAD_TOO_LARGE', 'PROCESS_ID_CONFLICT']);

/**
 * Checks each file valid offline with the daemon the CLI would publish to (POST /admin/flows
 * with dryRun: nothing changes), updating `results`. Resolves to null when the daemon checked
 * them, else to why not (no credential, no daemon answering, a credential refused): the caller
 * says the check was offline only. A daemon is asked only when a credential for it is found.
 */
export async function checkWithDaemon(
  ctx: CliContext,
  cmd: Command,
  results: ValidateResult[],
  environment: Environment,
): Promise<string | null> {
  const conn = await resolveConnection(ctx, globals(cmd));
  if (conn.apiKey === null) return `no credential for a daemon at ${conn.url}`;
  const client = new WfxClient(conn);
  for (const r of results.filter((r) => r.ok)) {
    try {
      await client.flows.publish({ source: r.source, environment, dryRun: true });
    } catch (err) {
      if (!isWfxError(err) || !FILE_REFUSALS.has(err.code)) {
        return `the daemon at ${conn.url} did not check it: ${isWfxError(err) ? `${err.code}: ` : ''}${(err as Error).message}`;
      }
      r.ok = false;
      r.problems = refusalProblems(err);
      if (err.code !== 'FLOW_INVALID') r.error = `${err.code}: ${err.message}`;
    }
  }
  return null;
}
