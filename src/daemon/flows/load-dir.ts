import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isFlowFile } from '../../shared/flow/files.js';
import { publishOrder } from '../../shared/flow/publish-order.js';
import type { FlowDefinition } from '../../shared/flow/types.js';
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
  const read = await Promise.all(names.map((name) => readFlowFile(join(dir, name))));
  // The tools of an agent flow first: publishing the agent checks them (in file order otherwise).
  const ordered = publishOrder(read, (r) => ('flow' in r ? r.flow : null));
  const outcomes = new Map<string, FileOutcome>();
  for (const r of ordered) outcomes.set(r.file, 'flow' in r ? await publish(store, r.file, r.flow, target) : r);
  return read.map((r) => outcomes.get(r.file)!);
}

/** Validates and publishes one flow file; a problem is reported in the outcome, never thrown. */
export async function publishFlowFile(
  store: DurableStore<WfxState, WfxRecord>,
  file: string,
  target: { organization: string; environment: Environment },
): Promise<FileOutcome> {
  const r = await readFlowFile(file);
  return 'flow' in r ? publish(store, file, r.flow, target) : r;
}

/** A flow file read and validated, or why it cannot be published. */
async function readFlowFile(file: string): Promise<{ readonly file: string; readonly flow: FlowDefinition } | FileOutcome> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    return { file, ok: false, problems: [], error: `cannot read it: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  const validation = validateFlowSource(text);
  return validation.ok ? { file, flow: validation.flow } : { file, ok: false, problems: validation.problems };
}

async function publish(
  store: DurableStore<WfxState, WfxRecord>,
  file: string,
  definition: FlowDefinition,
  target: { organization: string; environment: Environment },
): Promise<FileOutcome> {
  try {
    return { file, ok: true, result: await publishFlow(store, { definition, ...target }) };
  } catch (err) {
    const problems = (err as { details?: { problems?: FlowProblem[] } }).details?.problems;
    return problems ? { file, ok: false, problems } : { file, ok: false, problems: [], error: err instanceof Error ? err.message : String(err) };
  }
}
