import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { validateFlowSource, type FlowProblem } from '../../shared/flow/validate.js';
import type { WfxRecord } from '../state/records.js';
import type { Environment, WfxState } from '../state/state.js';
import type { DurableStore } from '../store/store.js';
import { publishFlow, type PublishResult } from './publish.js';

/** The outcome for one flow file of a directory. */
export type FileOutcome =
  | { readonly file: string; readonly ok: true; readonly result: PublishResult }
  | { readonly file: string; readonly ok: false; readonly problems: readonly FlowProblem[]; readonly error?: string };

/** True for the file names a flow directory holds. */
export const isFlowFile = (name: string): boolean => /\.(ya?ml|json)$/i.test(name);

/**
 * Validates and publishes every flow file (*.yaml, *.yml, *.json) of `dir` into `organization`
 * and `environment`. A file that does not validate is reported, never published, and does not
 * stop the others.
 */
export async function publishFlowDir(
  store: DurableStore<WfxState, WfxRecord>,
  dir: string,
  target: { organization: string; environment: Environment },
): Promise<FileOutcome[]> {
  const names = (await readdir(dir)).filter(isFlowFile).sort();
  const outcomes: FileOutcome[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const validation = validateFlowSource(await readFile(file, 'utf8'));
    if (!validation.ok) {
      outcomes.push({ file, ok: false, problems: validation.problems });
      continue;
    }
    try {
      outcomes.push({ file, ok: true, result: await publishFlow(store, { definition: validation.flow, ...target }) });
    } catch (err) {
      outcomes.push({ file, ok: false, problems: [], error: err instanceof Error ? err.message : String(err) });
    }
  }
  return outcomes;
}
