import type { FlowDefinition, Trigger } from '../../shared/flow/types.js';
import type { TriggerState, TriggerSubject } from '../../shared/api/index.js';
import { ENVIRONMENTS, type Environment, type Flow, type WfxState } from './state.js';

/** One trigger of the version active in one environment: what every trigger service fires. */
export interface ActiveTrigger<T extends Trigger['type']> {
  readonly flow: Flow;
  readonly environment: Environment;
  readonly version: string;
  readonly definition: FlowDefinition;
  readonly trigger: Extract<Trigger, { type: T }>;
  /** Its position in the definition's `triggers`. */
  readonly index: number;
}

/** The flow version a trigger belongs to (the wire's type, shared/api). */
export type { TriggerSubject };

/** The subject of an active trigger. */
export function subjectOf(
  a: Pick<ActiveTrigger<Trigger['type']>, 'flow' | 'definition' | 'environment' | 'version'>,
): TriggerSubject {
  return {
    processId: a.flow.processId,
    flowName: a.definition.name,
    organization: a.flow.organization,
    environment: a.environment,
    version: a.version,
  };
}

/** What every trigger's health says, besides its own details (the wire's type, shared/api). */
export type { TriggerState };

/** The triggers of type `type` of every environment's active flow version. */
export function activeTriggers<T extends Trigger['type']>(state: WfxState, type: T): Array<ActiveTrigger<T>> {
  const out: Array<ActiveTrigger<T>> = [];
  for (const flow of Object.values(state.flows)) {
    for (const environment of ENVIRONMENTS) {
      const version = flow.active[environment];
      const definition = version === undefined ? undefined : flow.versions[version]?.definition;
      if (!definition) continue;
      (definition.triggers ?? []).forEach((trigger, index) => {
        if (trigger.type === type)
          out.push({
            flow,
            environment,
            version: version!,
            definition,
            trigger: trigger as Extract<Trigger, { type: T }>,
            index,
          });
      });
    }
  }
  return out;
}
