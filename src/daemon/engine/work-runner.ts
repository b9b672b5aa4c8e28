/**
 * The work nodes ask for (serviceTask HTTP calls, scriptTask scripts, aiTask model calls),
 * carried out outside any step: started once the step that asked is durable, their result
 * handed back in a new step.
 */
import { errorMessage } from '../../shared/errors.js';
import { describeDepthExcess, jsonDepthExcess } from '../../shared/json-shape.js';
import { openedProviderLookup } from '../ai/lookup.js';
import { clientSpan, endAiSpan, endHttpSpan } from '../observe/client-spans.js';
import { traceparentOf } from '../observe/trace-context.js';
import { TRACER } from '../observe/tracing.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { AiAttempt, AiProviderLookup, AiRunner } from '../ai/types.js';
import { STATE, STATUS, type Execution, type LogEntry, type WfxState } from '../state/state.js';
import { nodeKey, type NodeKey } from './keys.js';
import type { RunStep, WorkOrder } from './step/index.js';
import type { HttpCall, HttpCallOptions } from './work/http.js';
import type { NetworkPolicy } from '../outbound/network-policy.js';
import type { WorkResult } from '../outbound/result.js';
import { createScriptRunner, type ScriptRunner } from './work/script.js';
import { secretNamer, withoutSecretValues, withSecretNames, withSecretValues } from './work/secret-refs.js';
import type { FlowSecretValues } from '../secrets/flow-secret-values.js';
import type { VoiceRunner } from '../voice/types.js';
import { execution } from '../state/executions.js';
import { McpWork } from './work/mcp-work.js';

/** What a WorkRunner needs from the engine. */
export interface WorkRunnerOptions {
  readonly state: WfxState;
  /** Opens the providers' API keys for each model call. */
  readonly secrets: SecretBox;
  /** How serviceTask calls are made (EngineOptions.http). */
  readonly http: (call: HttpCall, options: HttpCallOptions) => Promise<WorkResult>;
  /** Where serviceTask calls may connect (passed to `http`); undefined: its built-in rules. */
  readonly network: NetworkPolicy | undefined;
  /** Where the values of `{secret.NAME}` are read. */
  readonly secretValues: FlowSecretValues;
  /** The scriptTask sandbox; undefined: a pool of QuickJS workers, made on first use and closed by close(). */
  readonly scripts: ScriptRunner | undefined;
  /** How aiTask calls are made (EngineOptions.ai); undefined: they fail with AI_PROVIDER_NOT_FOUND. */
  readonly ai: AiRunner | undefined;
  /** How voiceTasks are carried out; undefined: they fail with VOICE_FAILED (no file store). */
  readonly voice: VoiceRunner | undefined;
  /** A piece of a model's answer as it streams in (not journaled; the engine's `progress` event). */
  readonly onProgress: (order: WorkOrder, delta: string) => void;
  readonly maxJsonDepth: number;
  readonly onError: (err: unknown, what: string) => void;
  /** True once the engine stops: no work starts, no result is handed back. */
  readonly closed: () => boolean;
  /** Runs a step with what the work hands back (runner.ts). */
  readonly step: RunStep;
}

/**
 * Work under way, by node instance. Work is not journaled while under way: after a crash the
 * node is still Active and runs again (at least once, as with every peer's HTTP tasks). A node
 * stopped meanwhile (cancelled, its execution ended) aborts its work and ignores the result.
 */
export class WorkRunner {
  /** Work under way (HTTP calls, scripts), by node instance: aborted when its node stops. */
  private readonly working = new Map<NodeKey, AbortController>();
  private scriptRunner: ScriptRunner | undefined;
  private readonly ownsScripts: boolean;
  /** aiTask providers by organization and name, read from the live state at each call. */
  private readonly providers: AiProviderLookup;

  /** A callAgent's MCP servers: listing their tools and calling one. */
  private readonly mcp: McpWork;

  constructor(private readonly options: WorkRunnerOptions) {
    this.mcp = new McpWork({
      network: options.network,
      openSecrets: (order, byToken) => this.openSecrets(order, byToken),
      log: (order, line) => this.logWork(order, line),
    });
    this.scriptRunner = options.scripts;
    this.ownsScripts = options.scripts === undefined;
    this.providers = openedProviderLookup(options.state, options.secrets);
  }

  /**
   * The values of the secrets a serviceTask's call names (`byToken`: stand-in -> name), opened
   * for its execution's organization and environment; or the failure that stops the call.
   */
  private async openSecrets(
    order: WorkOrder,
    byToken: Readonly<Record<string, string>>,
  ): Promise<
    { ok: true; values: Map<string, string>; named: Map<string, string> } | Extract<WorkResult, { ok: false }>
  > {
    const inst = execution(this.options.state, order.instanceId);
    return this.options.secretValues.openRefs(inst?.organization ?? '', inst?.environment ?? 'PRODUCTION', byToken);
  }

  /** True while the work of node instance `key` is under way (it must not be started again). */
  isWorking(key: NodeKey): boolean {
    return this.working.has(key);
  }

  /**
   * Starts a node's work (its step is durable) and resumes the node with the result in a new
   * step. Does nothing once closed, while the node's work is already under way, or when the
   * node is no longer Active in a running execution.
   */
  start(order: WorkOrder): void {
    const { state, onError, step } = this.options;
    const key = nodeKey(order.instanceId, order.nodeInstanceId);
    const live = () => {
      const inst = execution(state, order.instanceId);
      const ni = inst?.nodes[order.nodeInstanceId];
      return inst && ni && inst.stateCd === STATE.RUNNING && ni.statusCd === STATUS.ACTIVE ? { inst, ni } : null;
    };
    if (this.options.closed() || this.working.has(key) || !live()) return;
    const controller = new AbortController();
    this.working.set(key, controller);
    const run = async (): Promise<WorkResult> => {
      const { request } = order;
      if (request.kind === 'http') {
        let logged = 0;
        const secrets = request.call.secrets === undefined ? null : await this.openSecrets(order, request.call.secrets);
        if (secrets !== null && !secrets.ok) return secrets;
        const call = secrets === null ? request.call : withSecretValues(request.call, secrets.values);
        const span = TRACER === null ? null : clientSpan(TRACER, state, order, `HTTP ${request.call.method}`);
        const sent = await this.options.http(call, {
          signal: controller.signal,
          ...(this.options.network && { network: this.options.network }),
          ...(span && { traceparent: traceparentOf(span) }),
          onRetry: (info) => {
            logged++;
            const line = `attempt ${info.attempt} failed (${info.reason}); retrying in ${info.delayMs}ms`;
            this.logWork(order, secrets === null ? line : secretNamer(secrets.named)(line));
          },
        });
        // What came back holds no secret value: a server may echo one.
        const result = secrets === null ? sent : withoutSecretValues(sent, secrets.named);
        if (span) endHttpSpan(span, withSecretNames(request.call), result);
        // Retries were logged as they happened; the result's log repeats them before its last line.
        return { ...result, logs: (result.logs ?? []).slice(logged) };
      }
      if (request.kind === 'mcp') return this.mcp.call(order, request.call, controller.signal);
      if (request.kind === 'ai') {
        const ai = this.options.ai;
        if (!ai)
          return { ok: false, code: 'AI_PROVIDER_NOT_FOUND', message: 'no model runner: this daemon runs no aiTask' };
        // A callAgent's MCP servers' tools are listed for each turn, beside its flows.
        const listed = request.mcp === undefined ? null : await this.mcp.list(order, request, controller.signal);
        if (listed !== null && !listed.ok) return listed;
        const call = listed === null ? request.call : listed.call;
        const span = TRACER === null ? null : clientSpan(TRACER, state, order, 'model call');
        const answered = await ai.run(call, this.providers, {
          signal: controller.signal,
          ...(span && { traceparent: traceparentOf(span) }),
          onDelta: (delta) => {
            if (!controller.signal.aborted) this.options.onProgress(order, delta);
          },
          onAttempt: (attempt) => this.logAttempt(order, attempt),
        });
        if (span) endAiSpan(span, request.call, answered);
        // The step routes each call by the tools this turn offered.
        return listed === null || !answered.ok
          ? answered
          : { ...answered, value: { ...(answered.value as object), mcpTools: listed.tools } };
      }
      if (request.kind === 'voice') {
        const voice = this.options.voice;
        if (!voice) return { ok: false, code: 'VOICE_FAILED', message: 'this engine has no file store for voiceTasks' };
        return voice.run(request.call, this.providers, controller.signal);
      }
      this.scriptRunner ??= createScriptRunner({ maxJsonDepth: this.options.maxJsonDepth });
      // Whose script it is: the sandbox shares its workers between organizations, then executions.
      const inst = execution(state, order.instanceId);
      const root = inst && this.rootOf(inst);
      // The tree's priority: its root's start's (children carry it too, but not those started before they did).
      const priority = root === undefined ? undefined : (execution(state, root)?.priority ?? inst?.priority);
      const owner = inst
        ? { organization: inst.organization, execution: root!, ...(priority !== undefined && { priority }) }
        : {};
      return this.scriptRunner.run({ ...request.run, ...owner }, controller.signal);
    };
    run()
      .catch((err: unknown): WorkResult => ({
        ok: false,
        code: 'INTERNAL_ERROR',
        message: errorMessage(err),
      }))
      .then((result) => this.checkedResult(order.request.kind, result))
      .then((result) => {
        this.working.delete(key);
        const now = live();
        if (!now || this.options.closed() || controller.signal.aborted) return;
        const at = { instanceId: order.instanceId, nodeInstanceId: order.nodeInstanceId };
        return step({ kind: 'work.done', ...at, result, request: order.request }).catch((err: unknown) => {
          // Handling the result threw before anything changed (transact: nothing is applied on
          // a throw before the first record): the node fails visibly instead of staying Active,
          // and a restart does not run the work again.
          onError(err, `the result of ${key}`);
          const again = live();
          if (!again || this.options.closed()) return;
          const message = `handling the work's result failed: ${errorMessage(err)}`;
          return step({ kind: 'work.failed', ...at, code: 'INTERNAL_ERROR', message });
        });
      })
      .catch((err: unknown) => onError(err, `work of ${key}`));
  }

  /** The node of `key` stopped (completed, left): its work under way, if any, is aborted. */
  stop(key: NodeKey): void {
    this.working.get(key)?.abort(new Error('the node stopped'));
  }

  /** Aborts all work under way with `reason` (the engine stops: the nodes stay Active, so a restart runs them again). */
  abortAll(reason: unknown): void {
    for (const controller of this.working.values()) controller.abort(reason);
  }

  /**
   * The top execution of `inst`'s tree (a loop's iterations and subprocesses are executions of
   * their own): what the sandbox's turns between executions go by.
   */
  private rootOf(inst: Execution): string {
    let top = inst;
    for (let parent = top.parentInstanceId; parent !== null; parent = top.parentInstanceId) {
      const up = execution(this.options.state, parent);
      if (!up) break;
      top = up;
    }
    return top.processInstanceId;
  }

  /** Closes the script sandbox if this runner made it. */
  async close(): Promise<void> {
    if (this.ownsScripts) await this.scriptRunner?.close();
  }

  /**
   * A work result nested deeper than maxJsonDepth becomes the node's failure
   * (HTTP_RESPONSE_INVALID, SCRIPT_RESULT_INVALID, AI_OUTPUT_INVALID): it would overflow what
   * recurses over the variables later (the journal's JSON.stringify).
   */
  private checkedResult(kind: WorkOrder['request']['kind'], result: WorkResult): WorkResult {
    if (!result.ok) return result;
    const excess = jsonDepthExcess(result.value, this.options.maxJsonDepth);
    if (excess === null) return result;
    const { what, code } = INVALID_RESULT[kind];
    return {
      ok: false,
      code,
      message: `${what} is ${describeDepthExcess(excess)}`,
      ...(result.logs && { logs: result.logs }),
    };
  }

  /**
   * One request to a model provider, as a line of the execution log: model, latency, tokens and
   * finish reason; a failed one (WARN) with its code and what follows. Never the prompt or the
   * answer: those are in the node's variables.
   */
  private logAttempt(order: WorkOrder, a: AiAttempt): void {
    const tokens = `${a.usage.inputTokens} tokens in, ${a.usage.outputTokens} out`;
    const what = a.failure
      ? `failed (${a.failure.code}: ${a.failure.message})`
      : `finish ${a.finishReason ?? 'unknown'}`;
    const then = a.next ? `; ${a.next.why} in ${a.next.delayMs}ms` : '';
    this.logWork(
      order,
      `model ${a.model} attempt ${a.attempt}: ${a.latencyMs}ms, ${tokens}, ${what}${then}`,
      a.failure ? 'WARN' : 'INFO',
    );
  }

  /** A line in the execution log while work goes on (a retry, a model attempt), journaled like any other. */
  private logWork(order: WorkOrder, message: string, level: LogEntry['level'] = 'WARN'): void {
    const inst = execution(this.options.state, order.instanceId);
    const ni = inst?.nodes[order.nodeInstanceId];
    if (!inst || !ni || this.options.closed()) return;
    this.options
      .step({ kind: 'work.log', instanceId: order.instanceId, nodeInstanceId: order.nodeInstanceId, level, message })
      .catch((err: unknown) => this.options.onError(err, `log of ${order.instanceId}`));
  }
}

/** What a work result nested too deep is called, and the code its node fails with, by kind of work. */
const INVALID_RESULT = {
  http: { what: 'the response', code: 'HTTP_RESPONSE_INVALID' },
  script: { what: "the script's result", code: 'SCRIPT_RESULT_INVALID' },
  ai: { what: "the model's answer", code: 'AI_OUTPUT_INVALID' },
  voice: { what: 'the transcription', code: 'VOICE_FAILED' },
  mcp: { what: "the MCP tool's result", code: 'MCP_TOOL_FAILED' },
} as const satisfies Record<WorkOrder['request']['kind'], { what: string; code: string }>;
