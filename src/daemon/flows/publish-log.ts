/** Flow files published by the daemon itself (`--flows`, `wfx dev`), and their outcomes in its log. */
import type { Logger } from 'pino';
import { formatProblem } from '../../shared/flow/validate.js';
import type { WfxRecord } from '../state/records.js';
import type { Environment, WfxState } from '../state/state.js';
import type { RecordStore } from '../store/record-store.js';
import type { FlowChecker } from './check.js';
import type { FlowFileOwners } from './file-owners.js';
import { publishFlowDir, type FileOutcome } from './load-dir.js';

/**
 * Publishes the flow files of `dir`; a file that does not validate is logged with its problems,
 * not fatal. Resolves to each file's outcome (none when the directory cannot be read).
 */
export async function publishFlows(
  store: RecordStore<WfxState, WfxRecord>,
  dir: string,
  environment: Environment,
  logger: Logger,
  checker: FlowChecker,
  owners?: FlowFileOwners,
): Promise<FileOutcome[]> {
  const target = { organization: 'default', environment };
  const outcomes = await publishFlowDir(store, dir, target, checker, owners).catch((err: unknown) => {
    logger.warn({ err, dir }, 'flows: cannot read the flows directory');
    return [];
  });
  for (const o of outcomes) logOutcome(logger, o, environment);
  return outcomes;
}

/** Logs what became of one flow file: published (which version), or its problems at file:line:column. */
export function logOutcome(logger: Logger, o: FileOutcome, environment: Environment): void {
  if (o.ok) {
    const what = o.result.created ? `version ${o.result.version}` : `version ${o.result.version}, unchanged`;
    logger.info(
      { file: o.file, processId: o.result.processId, version: o.result.version, environment },
      `flows: published "${o.result.name}" (${what}) to ${environment}`,
    );
  } else {
    const lines = o.error ? [`${o.file}: ${o.error}`] : o.problems.map((p) => formatProblem(o.file, p));
    // The problems once, in the message: a field repeating them printed each twice on a terminal.
    logger.warn(
      { file: o.file, problemCount: lines.length },
      `flows: not published, it does not validate:\n  ${lines.join('\n  ')}`,
    );
  }
}
