/**
 * Which parts of a flow its tests took (`wfx test --coverage`): every node reached, and every
 * branch taken or not (shared/flow/coverage-items.ts; a boundary event is a node: reached when
 * it fired). Read from the executions a case ended with, their node instances and the
 * lines gateways log (engine/nodes/gateways.ts, tookOf), so any ended execution can be read
 * the same way. Nested bodies (loops, embedded subprocesses) count as parts of their flow.
 */
import { STATUS } from '../../shared/api/index.js';
import { branchPart, coverageItems, coverageKey, type CoverageItem } from '../../shared/flow/coverage-items.js';
import type { FlowDefinition, FlowNode } from '../../shared/flow/types.js';
import { flowHash } from '../flows/flow-hash.js';
import { tookOf } from '../engine/nodes/gateways.js';
import { logEntries } from '../state/log-line.js';
import type { Execution } from '../state/state.js';

/** A part of the flow, with whether the executions recorded took it. */
export interface CoveredItem extends CoverageItem {
  covered: boolean;
}

/** A flow's coverage: its items, marked as the executions recorded took them. */
export class FlowCoverage {
  /** Items by coverageKey. */
  private readonly items = new Map<string, CoveredItem>();

  /** The flow's processId, and the hash it is published under (flows/flow-hash.ts). */
  readonly processId: string;
  readonly hash: string;

  constructor(
    /** The flow file, as reports show it. */
    readonly file: string,
    definition: FlowDefinition,
  ) {
    this.processId = definition.processId;
    this.hash = flowHash(definition);
    for (const item of coverageItems(definition.nodes))
      this.items.set(coverageKey(item.node, item.part), { ...item, covered: false });
  }

  /** The items in the flow's order. */
  list(): CoveredItem[] {
    return [...this.items.values()];
  }

  /** Covered and total items, nodes and branches apart. */
  counts(): { nodes: [number, number]; branches: [number, number] } {
    const nodes: [number, number] = [0, 0];
    const branches: [number, number] = [0, 0];
    for (const item of this.items.values()) {
      const c = item.part === 'node' ? nodes : branches;
      c[1]++;
      if (item.covered) c[0]++;
    }
    return { nodes, branches };
  }

  /** Marks what execution `inst` (of this flow, or a body of it: `inst.scope`) took. */
  record(inst: Execution, flowNodes: Readonly<Record<string, FlowNode>>): void {
    const prefix = inst.scope && inst.scope.length > 0 ? `${inst.scope.join('/')}/` : '';
    const started = new Set<string>();
    for (const ni of Object.values(inst.nodes)) started.add(ni.nodeId);
    for (const ni of Object.values(inst.nodes)) {
      const id = ni.nodeId;
      this.mark(prefix + id, 'node');
      const def = flowNodes[id];
      if (def === undefined) continue;
      const left = ni.statusCd === STATUS.FAILED || ni.statusCd === STATUS.CANCELLED;
      if (left && def.errorFlow !== undefined && started.has(def.errorFlow)) this.mark(prefix + id, 'errorFlow');
      const timeoutFlow = 'timeoutFlow' in def ? def.timeoutFlow : undefined;
      if (ni.statusCd === STATUS.TIMED_OUT && timeoutFlow !== undefined && started.has(timeoutFlow))
        this.mark(prefix + id, 'timeoutFlow');
      if (def.type === 'loopNode' && ni.statusCd === STATUS.COMPLETED)
        this.mark(prefix + id, (ni.children?.length ?? 0) > 0 ? 'loop entered' : 'loop skipped');
    }
    // Gateways: what each says it took.
    for (const line of logEntries(inst)) {
      const def = flowNodes[line.nodeId];
      if (def === undefined) continue;
      for (const took of tookOf(line.message)) {
        if (def.type === 'ifElse') this.mark(prefix + line.nodeId, took.via === 'else' ? 'else' : 'then');
        else if (def.type === 'exclusiveGateway' || def.type === 'inclusiveGateway') {
          if (took.via === 'default') this.mark(prefix + line.nodeId, 'default');
          const i = def.branches?.findIndex((b) => b.condition === took.via && b.next === took.to) ?? -1;
          if (i >= 0) this.mark(prefix + line.nodeId, branchPart('branch', ['branches', i, 'next'])!);
        }
      }
    }
  }

  private mark(node: string, part: string): void {
    const item = this.items.get(coverageKey(node, part));
    if (item !== undefined) item.covered = true;
  }
}

/** Covered over total, as a percentage (100 for a flow with nothing to cover). */
export function percent(covered: number, total: number): number {
  return total === 0 ? 100 : (covered * 100) / total;
}
