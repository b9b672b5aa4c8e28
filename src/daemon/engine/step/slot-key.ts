/**
 * The slot a start of a flow with a `concurrency` limit holds (Execution.concurrency): its
 * environment, flow and key value; and the limit of a flow version. Pure (concurrency.ts uses them).
 */
import { resolveTemplate } from '../../../shared/expr/template.js';
import type { FlowConcurrency } from '../../../shared/flow/types.js';
import { ownEntry } from '../../../shared/json-object.js';
import type { WfxState } from '../../state/state.js';

/** The slot a start of flow `processId` with data `variables` holds: its environment, flow and key value. Pure. */
export function slotKey(
  environment: string,
  processId: string,
  key: string | undefined,
  variables: Readonly<Record<string, unknown>>,
): string {
  return `${environment}\0${processId}\0${key === undefined ? '' : keyValue(key, variables)}`;
}

/** The key template's value over the start data, as text (a missing reference is empty). */
function keyValue(key: string, variables: Readonly<Record<string, unknown>>): string {
  const { value } = resolveTemplate(key, { vars: variables, env: {} });
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The key value of slot `slot` (what views show); '' for a flow without `key`. Pure. */
export function slotKeyOf(slot: string): string {
  return slot.slice(slot.indexOf('\0', slot.indexOf('\0') + 1) + 1);
}

/** The concurrency of version `version` of flow `processId`, if it has one. */
export function concurrencyOf(state: WfxState, processId: string, version: string): FlowConcurrency | undefined {
  return ownEntry(state.flows, processId)?.versions[version]?.definition.concurrency;
}
