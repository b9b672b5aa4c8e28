/**
 * The stored files each live execution may name (by fileId, in any string), kept where a cold
 * execution's are known without its document (decision 068, step 7): the file store's
 * collection reads the resident executions themselves and this index for the cold ones, so a
 * file a cold execution names is never deleted. Derived, so never written to a snapshot
 * (DERIVED in state.ts): made where executions may leave memory (an `Executions` with a cold
 * side, state/executions.ts), filled by the recovery walk (engine/recovery.ts) and kept by the
 * reducer (records.ts) from then on.
 * Without a cold side no index is made and nothing is paid: every execution is resident and
 * read whole.
 *
 * An execution's entry holds the fileIds of its document when the walk read it and those of
 * every record applied to it since, until it is archived: a superset of what it names (a value
 * overwritten since still counts), so a file may be kept longer, never deleted too soon. An
 * execution that names no file has no entry (docs/decisions/005-no-long-lived-growing-collections.md).
 */
import { ownEntry } from '../../shared/json-object.js';
import type { Execution } from './execution-document.js';
import type { ExecutionTable } from './execution-table.js';
import { collectFileIds } from './stored-file.js';
import { ownIndex, StateIndex } from './state-index.js';

/** What a file index belongs to: the state's executions and the index kept beside them (WfxState.fileRefs). */
export interface FileRefsHolder {
  instances: Record<string, Execution | undefined>;
  /** The file store's files (WfxState.files): a record can name only one of these. */
  files: Record<string, unknown>;
  instanceTable?: ExecutionTable<Execution> | undefined;
  fileRefs?: FileRefs | undefined;
}

/** A record as the index reads it: the execution it names, or the one it starts. */
type ExecutionChange =
  | { readonly type: string; readonly instanceId: string }
  | { readonly type: 'instance.started'; readonly instance: Pick<Execution, 'processInstanceId'> }
  | { readonly type: string };

/** Whether `o` has no own enumerable key. */
function isEmpty(o: Record<string, unknown>): boolean {
  for (const _ in o) return false;
  return true;
}

/** The fileIds found in one record (reused: the reducer applies records one at a time). */
const scratch = new Set<string>();

/** The file index of one state. */
export class FileRefs extends StateIndex<FileRefsHolder> {
  /** The fileIds each live execution that names any may name, by its id. */
  private readonly byExecution = new Map<string, Set<string>>();
  /**
   * Cold executions were left unread whose fileIds no entry holds (a lazy open's, a takeover's):
   * until Executions.learnColdFiles reads them, the file sweep deletes nothing.
   */
  coldUnread = false;

  /** The index of `state` if it is made, else null (the reducer keeps up only an index that exists). */
  static held(state: FileRefsHolder): FileRefs | null {
    return ownIndex(state.fileRefs, state);
  }

  /** A new, empty index made the state's own, for a walk over every live execution to `add` each. */
  static fresh(state: FileRefsHolder): FileRefs {
    return (state.fileRefs = new FileRefs(state));
  }

  /** Notes every fileId resident execution `inst` names now, in place of what its entry held (the walk). */
  add(inst: Execution): void {
    const id = inst.processInstanceId;
    this.byExecution.delete(id);
    collectFileIds(inst, scratch);
    this.take(id);
  }

  /**
   * Record `r` was applied (the reducer, after its handler): the fileIds it carries are noted
   * for the execution it changed, if that one is resident; an archived execution's entry goes.
   */
  applied(r: ExecutionChange): void {
    if (r.type === 'instance.archived' && 'instanceId' in r) this.byExecution.delete(r.instanceId);
    // A fileId is drawn at random when its file is stored: with no file stored, no record can
    // name one (and a record that names one later is read then), so nothing is walked.
    else if (isEmpty(this.state.files)) return;
    else if ('instanceId' in r) {
      if (ownEntry(this.state.instances, r.instanceId) === undefined) return;
      collectFileIds(r, scratch);
      this.take(r.instanceId);
    } else if (r.type === 'instance.started' && 'instance' in r) {
      collectFileIds(r, scratch);
      this.take(r.instance.processInstanceId);
    }
  }

  /** Forgets the executions `leaving` names (they left the state with their partition). */
  drop(leaving: (instanceId: string) => boolean): void {
    for (const id of this.byExecution.keys()) if (leaving(id)) this.byExecution.delete(id);
  }

  /**
   * Adds to `into` the fileIds the executions that are not resident (cold, or being read back)
   * may name: what the collection cannot read from their documents. Reads no document.
   */
  notResident(into: Set<string>): void {
    for (const [id, files] of this.byExecution)
      if (ownEntry(this.state.instances, id) === undefined) for (const fileId of files) into.add(fileId);
  }

  /** The fileIds execution `id` may name (tests), empty when none. */
  of(id: string): ReadonlySet<string> {
    return this.byExecution.get(id) ?? new Set();
  }

  /** Moves what `scratch` found into execution `id`'s entry. */
  private take(id: string): void {
    if (scratch.size === 0) return;
    let files = this.byExecution.get(id);
    if (files === undefined) this.byExecution.set(id, (files = new Set()));
    for (const fileId of scratch) files.add(fileId);
    scratch.clear();
  }
}
