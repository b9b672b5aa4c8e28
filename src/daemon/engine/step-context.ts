/**
 * The step's context on a running engine (step/context.ts, StepContext): flows parsed once per
 * version from the live state, the environments' values, the store's ids, the work runner's
 * in-flight map, the file store. Made once per engine; a step only reads through it.
 */
import { FlowGraph } from '../../shared/flow/graph.js';
import { nodesAt } from '../../shared/flow/types.js';
import type { DomainSchemas } from './domain-schemas.js';
import type { Execution, WfxState } from '../state/state.js';
import type { NodeKey } from './keys.js';
import type { ExecutionLimits } from './limits.js';
import type { StartRate } from './start-rate.js';
import type { FileMeta, FlowScope, StepContext, StepTracing } from './step/context.js';
import { continuedTrace, traceForStart } from '../observe/execution-spans.js';
import { TRACER } from '../observe/tracing.js';
import { uuidv7 } from '../state/ids.js';

/** Tracing for steps, through the process's tracer (read while it is set: StepContext.tracing). */
const TRACING: StepTracing = {
  continued: continuedTrace,
  forStart: (state, parentInstanceId, parentNodeInstanceId, continues) =>
    traceForStart(TRACER!, state, parentInstanceId, parentNodeInstanceId, continues),
};

/** The `{env.*}` of an organization and environment that has none set. */
const NO_ENV: Readonly<Record<string, string>> = Object.freeze({});

/** What an EngineStepContext reads from (see the top of this file). */
export interface EngineStepContextOptions {
  readonly state: WfxState;
  readonly newInstanceId: (now: Date, parentInstanceId: string | null) => string;
  /** Other ids (StepContext.newId); default uuidv7. */
  readonly newId?: ((now: Date) => string) | undefined;
  /** Tracing (StepContext.tracing); default the process's tracer, while one is set. */
  readonly tracing?: StepTracing | null | undefined;
  readonly isWorking: (key: NodeKey) => boolean;
  /** The file store's lookup (FileStore.get); undefined: no file store, every file reference refused. */
  readonly files: { get(organization: string, fileId: string): FileMeta | undefined } | undefined;
  readonly maxJsonDepth: number;
  readonly schemas: DomainSchemas;
  readonly limits: ExecutionLimits;
  readonly startRate: Pick<StartRate, 'take'>;
  readonly claimsKept: boolean;
  readonly keepsThrown: boolean;
}

/** The parsed flow versions of a state, by execution: what a step reads, and an execution's summary. */
export class FlowScopes implements Pick<StepContext, 'flowOf'> {
  /** Parsed flow versions: processId -> version (and body scope, `version/loop/inner`) -> nodes, graph and start node. */
  private readonly graphs = new Map<string, Map<string, FlowScope>>();

  constructor(private readonly state: WfxState) {}

  flowOf(inst: Execution): FlowScope {
    let versions = this.graphs.get(inst.processId);
    if (!versions) this.graphs.set(inst.processId, (versions = new Map()));
    const key = inst.scope ? `${inst.processVersion}/${inst.scope.join('/')}` : inst.processVersion;
    let g = versions.get(key);
    if (!g) {
      const definition = this.state.flows[inst.processId]!.versions[inst.processVersion]!.definition;
      const nodes = nodesAt(definition, inst.scope)!;
      const startId = Object.keys(nodes).find((n) => nodes[n]!.type === 'startEvent')!;
      g = { definition, nodes, graph: new FlowGraph(nodes), startId };
      versions.set(key, g);
    }
    return g;
  }
}

/** The step's context on a running engine (see the top of this file). */
export class EngineStepContext implements StepContext {
  private readonly state: WfxState;
  private readonly scopes: FlowScopes;
  readonly newInstanceId: (now: Date, parentInstanceId: string | null) => string;
  readonly newId: (now: Date) => string;
  private readonly ownTracing: StepTracing | null | undefined;
  readonly isWorking: (key: NodeKey) => boolean;
  private readonly files: EngineStepContextOptions['files'];
  readonly maxJsonDepth: number;
  readonly schemas: DomainSchemas;
  readonly limits: ExecutionLimits;
  readonly startRate: Pick<StartRate, 'take'>;
  readonly claimsKept: boolean;
  readonly keepsThrown: boolean;

  constructor(options: EngineStepContextOptions) {
    this.state = options.state;
    this.scopes = new FlowScopes(options.state);
    this.newInstanceId = options.newInstanceId;
    this.newId = options.newId ?? uuidv7;
    this.ownTracing = options.tracing;
    this.isWorking = options.isWorking;
    this.files = options.files;
    this.maxJsonDepth = options.maxJsonDepth;
    this.schemas = options.schemas;
    this.limits = options.limits;
    this.startRate = options.startRate;
    this.claimsKept = options.claimsKept;
    this.keepsThrown = options.keepsThrown;
  }

  get tracing(): StepTracing | null {
    if (this.ownTracing !== undefined) return this.ownTracing;
    return TRACER === null ? null : TRACING;
  }

  flowOf(inst: Execution): FlowScope {
    return this.scopes.flowOf(inst);
  }

  envOf(inst: Execution): Readonly<Record<string, string>> {
    return this.state.environments[inst.organization]?.[inst.environment] ?? NO_ENV;
  }

  file(organization: string, fileId: string): FileMeta | undefined {
    return this.files?.get(organization, fileId);
  }
}
