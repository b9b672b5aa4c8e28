import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isFlowFile } from '../../shared/flow/files.js';
import { duplicateProcessId, sharedProcessIds } from '../../shared/flow/duplicate-ids.js';
import { publishOrder } from '../../shared/flow/publish-order.js';
import type { FlowProblem } from '../../shared/flow/validate.js';
import type { WfxRecord } from '../state/records.js';
import type { Environment, WfxState } from '../state/state.js';
import type { DurableStore } from '../store/store.js';
import { inlineFlowChecker, type CheckedFlow, type FlowChecker } from './check.js';
import { FlowFileOwners } from './file-owners.js';
import { publishFlow, type PublishResult } from './publish.js';
import { errorMessage } from '../../shared/errors.js';

/** The outcome for one flow file of a directory. */
export type FileOutcome =
  | { readonly file: string; readonly ok: true; readonly result: PublishResult }
  | { readonly file: string; readonly ok: false; readonly problems: readonly FlowProblem[]; readonly error?: string };

/**
 * Validates and publishes every flow file (*.yaml, *.yml, *.json) of `dir` into `organization`
 * and `environment`. A file that does not validate is reported, never published, and does not
 * stop the others. Files are read and checked one at a time (by `checker`: the daemon's checks
 * off its event loop), so a directory of many flows never fills the organization's line.
 */
export async function publishFlowDir(
  store: DurableStore<WfxState, WfxRecord>,
  dir: string,
  target: { organization: string; environment: Environment },
  checker: FlowChecker = inlineFlowChecker(),
  owners: FlowFileOwners = new FlowFileOwners(),
): Promise<FileOutcome[]> {
  const names = (await readdir(dir)).filter(isFlowFile).sort();
  const read: Array<ReadFile | FileOutcome> = [];
  for (const name of names) read.push(await readFlowFile(join(dir, name), target.organization, checker));
  const shared = sharedProcessIds(
    read,
    (r) => ('checked' in r ? r.checked.flow.processId : null),
    (r) => r.file,
  );
  // The tools of an agent flow first: publishing the agent checks them (in file order otherwise).
  const ordered = publishOrder(read, (r) => ('checked' in r ? r.checked.flow : null));
  const outcomes = new Map<string, FileOutcome>();
  for (const r of ordered) {
    const twin = shared.get(r);
    const outcome: FileOutcome = !('checked' in r)
      ? r
      : twin
        ? refusedTwin(r, twin.processId, twin.others)
        : await publishOwned(store, r, target, checker, owners);
    outcomes.set(r.file, outcome);
  }
  return read.map((r) => outcomes.get(r.file)!);
}

/**
 * Validates and publishes one flow file; a problem is reported in the outcome, never thrown.
 * With `owners`, a file whose processId another file of theirs still has is refused.
 */
export async function publishFlowFile(
  store: DurableStore<WfxState, WfxRecord>,
  file: string,
  target: { organization: string; environment: Environment },
  checker: FlowChecker = inlineFlowChecker(),
  owners: FlowFileOwners = new FlowFileOwners(),
): Promise<FileOutcome> {
  const r = await readFlowFile(file, target.organization, checker);
  return 'checked' in r ? publishOwned(store, r, target, checker, owners) : r;
}

/** Publishes `r` unless another file of `owners` has its processId (then refuses it). */
async function publishOwned(
  store: DurableStore<WfxState, WfxRecord>,
  r: ReadFile,
  target: { organization: string; environment: Environment },
  checker: FlowChecker,
  owners: FlowFileOwners,
): Promise<FileOutcome> {
  const processId = r.checked.flow.processId;
  const other = await owners.claim(r.file, processId);
  return other === null ? publish(store, r, target, checker) : refusedTwin(r, processId, [other]);
}

/** The outcome of a file refused for sharing `processId` with the files `others`. */
function refusedTwin(r: ReadFile, processId: string, others: readonly string[]): FileOutcome {
  return { file: r.file, ok: false, problems: [duplicateProcessId(processId, others, r.source)] };
}

/** A flow file read and found valid. */
interface ReadFile {
  readonly file: string;
  readonly source: string;
  readonly checked: Extract<CheckedFlow, { ok: true }>;
}

/** A flow file read and validated, or why it cannot be published. */
async function readFlowFile(file: string, organization: string, checker: FlowChecker): Promise<ReadFile | FileOutcome> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    return { file, ok: false, problems: [], error: `cannot read it: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  try {
    const checked = await checker.check(organization, { source: text });
    return checked.ok ? { file, source: text, checked } : { file, ok: false, problems: checked.problems };
  } catch (err) {
    return { file, ok: false, problems: [], error: errorMessage(err) };
  }
}

async function publish(
  store: DurableStore<WfxState, WfxRecord>,
  { file, source, checked }: ReadFile,
  target: { organization: string; environment: Environment },
  checker: FlowChecker,
): Promise<FileOutcome> {
  try {
    return { file, ok: true, result: await publishFlow(store, { definition: checked.flow, hash: checked.hash, ...target }) };
  } catch (err) {
    const problems = (err as { details?: { problems?: FlowProblem[] } }).details?.problems;
    if (!problems) return { file, ok: false, problems: [], error: errorMessage(err) };
    // The publish's checks (webhooks, tools, domains) name a property: give it its line:column.
    return { file, ok: false, problems: await checker.locate(target.organization, source, problems).catch(() => problems) };
  }
}
