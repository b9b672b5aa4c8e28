/**
 * What a node handler sees of its execution while it runs (nodes/handler.ts, NodeScope): its
 * variables resolved, the organization's domains, memory, files and flows, read from the state.
 */
import { evaluateCondition } from '../../../shared/expr/juel.js';
import { resolveDeep } from '../../../shared/expr/template.js';
import type { FlowDefinition, FlowNode } from '../../../shared/flow/types.js';
import { extensibleCopy, ownEntry } from '../../../shared/json-object.js';
import type { DomainSchemas } from '../domain-schemas.js';
import { memoryEntry, type MemoryEntry } from '../../state/memory.js';
import type { WfxRecord } from '../../state/records.js';
import type { AgentState, DomainAction, Execution, NodeInstance, StoredFile, WfxState } from '../../state/state.js';
import type { NodeScope } from '../nodes/handler.js';

/** `{env.*}` names whose values are credentials: their values never reach a log line. */
const CREDENTIAL_NAME = /key|token|secret|pass|pwd|auth|sig|credential|session|cookie/i;

/** What a node handler sees of its execution: one object per run, its methods on the prototype. */
export class Scope implements NodeScope {
  constructor(
    readonly instance: Execution,
    readonly nodeId: string,
    readonly now: Date,
    private readonly at: string,
    readonly wait: NodeInstance['wait'],
    readonly agent: AgentState | null,
    private readonly env: Readonly<Record<string, string>>,
    private readonly node: FlowNode,
    /** WARN lines for missing references, written after the node's own record. */
    private readonly warnings: WfxRecord[],
    private readonly state: WfxState,
    private readonly schemas: DomainSchemas,
    readonly maxLoopIterations: number,
  ) {}

  domainAction(domain: string, action: string): DomainAction | undefined {
    const org = ownEntry(this.state.domains, this.instance.organization);
    const d = org && ownEntry(org, domain);
    return d && ownEntry(d.actions, action);
  }

  schemaProblem(schema: Record<string, unknown>, value: unknown, what: string): string | null {
    return this.schemas.problem(schema, value, what);
  }

  memory(namespace: string, key: string): MemoryEntry | undefined {
    return memoryEntry(this.state.memory, { organization: this.instance.organization, namespace, key }, this.now);
  }

  file(fileId: string): StoredFile | undefined {
    const file = Object.hasOwn(this.state.files, fileId) ? this.state.files[fileId] : undefined;
    return file?.organization === this.instance.organization ? file : undefined;
  }

  publishedFlow(processId: string): { readonly version: string; readonly definition: FlowDefinition } | undefined {
    const flow = ownEntry(this.state.flows, processId);
    if (!flow || flow.organization !== this.instance.organization) return undefined;
    const version = flow.active[this.instance.environment];
    const published = version === undefined ? undefined : flow.versions[version];
    return published && { version: published.version, definition: published.definition };
  }

  memoryEntries(namespace: string): Array<[string, MemoryEntry]> {
    const orgName = this.instance.organization;
    const store = this.state.memory;
    const org = Object.hasOwn(store, orgName) ? store[orgName]! : {};
    const ns = Object.hasOwn(org, namespace) ? org[namespace]! : {};
    const now = this.now.getTime();
    return Object.entries(ns).filter(([, e]) => e.expiresAt === null || Date.parse(e.expiresAt) > now);
  }

  credentials(): readonly string[] {
    const out: string[] = [];
    for (const [name, value] of Object.entries(this.env))
      if (CREDENTIAL_NAME.test(name) && value !== '') out.push(value);
    return out;
  }

  resolveChecked(
    value: unknown,
    fallback?: Readonly<Record<string, unknown>>,
    secret?: (name: string) => string,
  ): { readonly value: unknown; readonly missing: readonly string[] } {
    const vars = fallback ? extensibleCopy(fallback, this.instance.variables) : this.instance.variables;
    return resolveDeep(value, { vars, env: this.env, ...(secret && { secret }) });
  }

  resolve(value: unknown, fallback?: Readonly<Record<string, unknown>>, secret?: (name: string) => string): unknown {
    const r = this.resolveChecked(value, fallback, secret);
    for (const ref of r.missing) {
      this.warnings.push({
        type: 'instance.logged',
        instanceId: this.instance.processInstanceId,
        entry: {
          nodeId: this.nodeId,
          nodeName: this.node.name ?? this.nodeId,
          nodeType: this.node.type,
          level: 'WARN',
          message: `reference {${ref}} is missing; it resolved to an empty string`,
          timestamp: this.at,
        },
      });
    }
    return r.value;
  }

  condition(text: string, variables: Readonly<Record<string, unknown>> = this.instance.variables): boolean {
    return evaluateCondition(text, { env: this.env, ...variables });
  }
}
