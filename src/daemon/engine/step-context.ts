/**
 * The step's context on a running engine (step/context.ts, StepContext): flows parsed once per
 * version from the live state, the environments' values, the store's ids, the work runner's
 * in-flight map, the file store. Made once per engine; a step only reads through it.
 */
import { FlowGraph } from '../../shared/flow/graph.js';
import { nodesAt } from '../../shared/flow/types.js';
import type { Execution, WfxState } from '../state/state.js';
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

/** What an engine's step context is made of (see the top of this file): the settings a step reads as they are, and where the rest comes from. */
export type EngineStepContextOptions = Pick<
  StepContext,
  'newInstanceId' | 'isWorking' | 'maxJsonDepth' | 'schemas' | 'limits' | 'startRate' | 'claimsKept' | 'keepsThrown'
> & {
  readonly state: WfxState;
  /** Other ids (StepContext.newId); default uuidv7. */
  readonly newId?: ((now: Date) => string) | undefined;
  /** Tracing (StepContext.tracing); default the process's tracer, while one is set. */
  readonly tracing?: StepTracing | null | undefined;
  /** The file store's lookup (FileStore.get); undefined: no file store, every file reference refused. */
  readonly files: { get(organization: string, fileId: string): FileMeta | undefined } | undefined;
};

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
export function engineStepContext(options: EngineStepContextOptions): StepContext {
  const { state, files, tracing } = options;
  const scopes = new FlowScopes(state);
  return {
    newInstanceId: options.newInstanceId,
    newId: options.newId ?? uuidv7,
    isWorking: options.isWorking,
    maxJsonDepth: options.maxJsonDepth,
    schemas: options.schemas,
    limits: options.limits,
    startRate: options.startRate,
    claimsKept: options.claimsKept,
    keepsThrown: options.keepsThrown,
    get tracing(): StepTracing | null {
      if (tracing !== undefined) return tracing;
      return TRACER === null ? null : TRACING;
    },
    flowOf: (inst) => scopes.flowOf(inst),
    envOf: (inst) => state.environments[inst.organization]?.[inst.environment] ?? NO_ENV,
    file: (organization, fileId) => files?.get(organization, fileId),
  };
}
