/**
 * A check for tests (EngineOptions.checkTouched): a step changes only executions of the trees its
 * input names (step/touched.ts), ones it starts, and ones a thrown event wakes (Step.reach, the
 * one path past them). Once executions live on disk (decision 068), a record reaching one the
 * runner did not ensure would apply to nothing.
 */
import { executionsTouched, type WfxRecord } from '../state/records.js';
import { execution, treeOf } from '../state/executions.js';
import type { WfxState } from '../state/state.js';

/**
 * Whether a daemon started by the tests checks every step (`WFX_TEST_CHECK_TOUCHED=1`, set by
 * test/helpers/cli.ts), so that end-to-end paths are held to what the engine tests are. Read once.
 */
export const CHECK_TOUCHED_BY_ENV = process.env.WFX_TEST_CHECK_TOUCHED === '1';

/** A step's `apply` that checks each record first, and the `reach` that widens what it allows. */
export interface TouchCheck {
  readonly apply: (record: WfxRecord) => void;
  readonly reach: (instanceId: string) => void;
}

/**
 * `apply`, checking first that each record changes only executions of the trees of `named`,
 * of those `reach` was told of, or started by the step; throws (an Error, a defect) on one that
 * does not.
 */
export function touchCheck(
  state: WfxState,
  kind: string,
  named: readonly string[],
  apply: (record: WfxRecord) => void,
): TouchCheck {
  const ids = new Set<string>();
  const trees = new Set<string>();
  const allow = (id: string): void => {
    ids.add(id);
    const inst = execution(state, id);
    if (inst) trees.add(treeOf(inst));
  };
  for (const id of named) allow(id);
  return {
    apply: (record) => {
      if (record.type === 'instance.started') ids.add(record.instance.processInstanceId);
      // A retry brings a failed chain back from history: a member of a named tree, not resident yet.
      if (record.type === 'instance.revived' && record.instance !== undefined) {
        const tree = treeOf(record.instance);
        if (ids.has(tree) || trees.has(tree)) ids.add(record.instanceId);
      }
      executionsTouched.touched(record, (id) => {
        if (ids.has(id)) return;
        const inst = execution(state, id);
        if (inst && (trees.has(treeOf(inst)) || ids.has(treeOf(inst)))) return;
        throw new Error(`a ${kind} step wrote ${record.type} to execution ${id}, of a tree its input did not name`);
      });
      apply(record);
    },
    reach: allow,
  };
}
