import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isFlowFile } from '../../shared/flow/files.js';
import { validateFlowSource, type FlowProblem } from '../../shared/flow/validate.js';
import type { WfxRecord } from '../state/records.js';
import type { Environment, WfxState } from '../state/state.js';
import type { DurableStore } from '../store/store.js';
import { publishFlow, type PublishResult } from './publish.js';

/** The outcome for one flow file of a directory. */
export type FileOutcome =
  | { readonly file: string; readonly ok: true; readonly result: PublishResult }
  | { readonly file: string; readonly ok: false; readonly problems: readonly FlowProblem[]; readonly error?: string };

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
  for (const name of names) outcomes.push(await publishFlowFile(store, join(dir, name), target));
  return outcomes;
}

/** Validates and publishes one flow file; a problem is reported in the outcome, never thrown. */
export async function publishFlowFile(
  store: DurableStore<WfxState, WfxRecord>,
  file: string,
  target: { organization: string; environment: Environment },
): Promise<FileOutcome> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    return { file, ok: false, problems: [], error: `cannot read it: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  const validation = validateFlowSource(text);
  if (!validation.ok) return { file, ok: false, problems: validation.problems };
  try {
    return { file, ok: true, result: await publishFlow(store, { definition: validation.flow, ...target }) };
  } catch (err) {
    const problems = (err as { details?: { problems?: FlowProblem[] } }).details?.problems;
    return problems ? { file, ok: false, problems } : { file, ok: false, problems: [], error: err instanceof Error ? err.message : String(err) };
  }
}
