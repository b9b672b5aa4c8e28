/**
 * The one seam before the executions (decision 068, step 3): what reads an execution by id goes
 * through here, so that a later step can keep most of them on disk. `execution` reads one that
 * is resident (steps and reducers, which run synchronously); `Executions.ensure` makes whole
 * trees resident before a step or an API read (everything is resident today: it never waits).
 */
import { ownEntry } from '../../shared/json-object.js';
import type { Instance } from './instance.js';

/** What holds the resident executions (WfxState's `instances`): typed here so that the derived indexes state.ts names can import this module. */
export interface ExecutionsHolder {
  readonly instances: Readonly<Record<string, Instance | undefined>>;
}

/** Execution `id` when it is resident (live, not archived), else undefined. Pure. */
export function execution(state: ExecutionsHolder, id: string): Instance | undefined {
  return ownEntry(state.instances, id);
}

/** The id of the tree `inst` belongs to: its root's (callProcess starts included, see Instance.root). */
export function treeOf(inst: Instance): string {
  return inst.root ?? inst.processInstanceId;
}

/** The executions of a state, read through the seam (see the top of this file). */
export class Executions {
  constructor(private readonly state: ExecutionsHolder) {}

  /** True while every execution is resident (always, today): a step need not name its executions. */
  get allResident(): boolean {
    return true;
  }

  /** Execution `id` when it is resident, else undefined (see `execution`). */
  get(id: string): Instance | undefined {
    return execution(this.state, id);
  }

  /**
   * Makes the whole trees of executions `ids` resident (steps walk parents and children): null
   * when they are already, so a caller goes on synchronously, else a promise that resolves once
   * they are. An id of no execution is passed over: the step or read says what it finds.
   */
  ensure(_ids: readonly string[]): Promise<void> | null {
    return null;
  }
}
