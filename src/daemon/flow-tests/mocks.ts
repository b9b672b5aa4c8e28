/**
 * The work of a case's nodes (run-case.ts): each work node's mock answers in order, through the
 * code that handles the real answer, so a mocked answer is judged as a real one would be. A
 * serviceTask's mock answers each attempt through callHttp (accepted statuses, retries,
 * failure codes); an aiTask's or callAgent's answers each request to the model through the
 * daemon's model runner (structured output checked, repairs asked, tool calls passed to the
 * agent); a callAgent's MCP tools, mocked as `AGENT.TOOL`, are offered and answered through
 * the work runner's MCP code (mcp-mocks.ts); a domainTask's answers each of its jobs as its
 * worker would (`job`, through the step's own completion, the action's output schema checked); a
 * voiceTask's gives what it heard or a file it spoke. A scriptTask with no mock runs in the real
 * sandbox; any other work node with none stops the case (NO_MOCK), a serviceTask's and an MCP
 * server's unless the network is allowed.
 */
import { createAiRunner } from '../ai/runner.js';
import type { ModelOutcome, ProviderKind } from '../ai/provider-kind.js';
import type { WorkOrder } from '../engine/step/context.js';
import type { WorkRequest } from '../engine/nodes/handler.js';
import { McpWork } from '../engine/work/mcp-work.js';
import type { McpListedTool } from '../engine/work/mcp.js';
import { callHttp, type HttpReply } from '../engine/work/http.js';
import type { ScriptRunner } from '../engine/work/script.js';
import type { WorkResult } from '../outbound/result.js';
import type { AiProvider } from '../state/state.js';
import { withoutSecretValues, withSecretValues } from '../engine/work/secret-refs.js';
import { mockedMcpClient, mockedTools } from './mcp-mocks.js';
import { spokenFile } from './voice-mocks.js';
import type { FailMock, JobMock, Mock, MockAnswer } from './test-file.js';

/** Stops a case: thrown from anywhere in it, caught once by runCase. */
export class CaseStop extends Error {
  constructor(
    readonly at: string,
    message: string,
    readonly expected?: unknown,
    readonly actual?: unknown,
  ) {
    super(message);
  }
}

const WORK_TYPES: Readonly<Record<string, string>> = {
  http: 'serviceTask',
  script: 'scriptTask',
  ai: 'aiTask or callAgent',
  voice: 'voiceTask',
};

/** What the work of a case needs beside its mocks. */
export interface CaseWorkSetting {
  /** The scriptTask sandbox, shared by the run's cases. */
  readonly scripts: () => ScriptRunner;
  /** Unmocked serviceTasks call the network (`--allow-network`). */
  readonly allowNetwork: boolean;
}

/** The provider every mocked model call is made to: no key, no URL, never reached. */
const MOCK_PROVIDER: AiProvider = {
  providerId: 'mock',
  name: 'mock',
  organization: 'default',
  kind: 'openai-compatible',
  model: 'mock',
  isDefault: true,
  createdAt: '1970-01-01T00:00:00.000Z',
  updatedAt: '1970-01-01T00:00:00.000Z',
};

/** The mocks of one case and how many times each node has called its own. */
export class CaseWork {
  private readonly calls = new Map<string, number>();

  constructor(
    private readonly mocks: Readonly<Record<string, Mock>>,
    /** Where the case stands (`file:line:column`): where a stop is reported. */
    private readonly at: string,
    private readonly setting: CaseWorkSetting,
    /** The case's clock (a spoken file's time). */
    private readonly now: () => Date,
    /** The case's `{secret.NAME}` values (its `secrets`). */
    private readonly secrets: Readonly<Record<string, string>> = {},
  ) {}

  /**
   * Carries out `order`, the work of node `nodeId`. A serviceTask's `{secret.NAME}` takes the
   * case's value, as the daemon's work runner takes the real one: filled in as the call goes out,
   * written `[secret NAME]` in what comes back; one the case does not give fails the node with
   * SECRET_NOT_FOUND, as a daemon without the value does.
   */
  async run(order: WorkOrder, nodeId: string): Promise<WorkResult> {
    const request = order.request;
    if (request.kind === 'http' && request.call.secrets !== undefined) {
      const opened = this.openSecrets(request.call.secrets);
      if (!opened.ok) return opened;
      const result = await this.work(
        { ...order, request: { kind: 'http', call: withSecretValues(request.call, opened.values) } },
        nodeId,
      );
      return withoutSecretValues(result, opened.named);
    }
    return this.work(order, nodeId);
  }

  /** The case's values of a call's secrets (`byToken`: stand-in -> name), or SECRET_NOT_FOUND. */
  private openSecrets(
    byToken: Readonly<Record<string, string>>,
  ): { ok: true; values: Map<string, string>; named: Map<string, string> } | Extract<WorkResult, { ok: false }> {
    const values = new Map<string, string>();
    const named = new Map<string, string>();
    for (const [token, name] of Object.entries(byToken)) {
      const value = Object.hasOwn(this.secrets, name) ? this.secrets[name]! : undefined;
      if (value === undefined)
        return {
          ok: false,
          code: 'SECRET_NOT_FOUND',
          message: `secret ${name} has no value in the case (give it under secrets)`,
        };
      values.set(token, value);
      if (value !== '') named.set(value, name);
    }
    return { ok: true, values, named };
  }

  private async work(order: WorkOrder, nodeId: string): Promise<WorkResult> {
    const request = order.request;
    // An MCP tool's mock is under AGENT.TOOL, not under the agent's id.
    if (request.kind === 'mcp') return this.mcp(nodeId).call(order, request.call, NOT_ABORTED);
    if (this.mocks[nodeId] === undefined) {
      if (request.kind === 'script') return this.setting.scripts().run(request.run);
      if (request.kind === 'http' && this.setting.allowNetwork) return callHttp(request.call);
      throw new CaseStop(
        this.at,
        `NO_MOCK: ${WORK_TYPES[request.kind] ?? 'work node'} "${nodeId}" has no mock: give it one under mocks` +
          (request.kind === 'http' ? ', or run with --allow-network' : ''),
      );
    }
    if (request.kind === 'http') return this.http(nodeId, request.call);
    if (request.kind === 'ai') return this.model(order, nodeId, request);
    const answer = this.next(nodeId);
    if ('fail' in answer) return { ok: false, code: answer.fail.code as never, message: answer.fail.message };
    if (request.kind === 'voice') {
      const call = request.call;
      if (call.operation === 'transcribe' && 'heard' in answer)
        return { ok: true, value: { text: answer.heard, language: answer.language ?? call.language } };
      if (call.operation === 'speak' && 'spoken' in answer)
        return { ok: true, value: spokenFile(call, answer.spoken, nodeId, this.calls.get(nodeId)!, this.now()) };
      throw new CaseStop(
        this.at,
        `"${nodeId}" is a voiceTask that ${call.operation === 'speak' ? 'speaks: mock it with spoken' : 'transcribes: mock it with heard'} or fail`,
      );
    }
    throw this.wrongKind(nodeId, request.kind);
  }

  /** The answer to a domainTask's job (node `nodeId`): its output, or a failure. */
  job(nodeId: string): JobMock | FailMock {
    if (this.mocks[nodeId] === undefined)
      throw new CaseStop(
        this.at,
        `NO_MOCK: domainTask "${nodeId}" has no mock: give it one under mocks (result or fail)`,
      );
    const answer = this.next(nodeId);
    if ('result' in answer || 'fail' in answer) return answer;
    throw new CaseStop(this.at, `"${nodeId}" is a domainTask: mock it with result or fail`);
  }

  /** The next answer of node `nodeId`'s mock: the same every call, or the next of its list. */
  private next(nodeId: string): MockAnswer {
    const mock = this.mocks[nodeId]!;
    const n = (this.calls.get(nodeId) ?? 0) + 1;
    this.calls.set(nodeId, n);
    if (!Array.isArray(mock)) return mock as MockAnswer;
    const answer = (mock as readonly MockAnswer[])[n - 1];
    if (answer === undefined)
      throw new CaseStop(
        this.at,
        `MOCK_EXHAUSTED: "${nodeId}" was called ${n} times; its mock has ${mock.length} answer${mock.length === 1 ? '' : 's'}`,
      );
    return answer;
  }

  private wrongKind(nodeId: string, kind: string): CaseStop {
    const takes: Record<string, string> = {
      http: 'status, timeout or network',
      ai: 'reply, toolCalls or fail',
      voice: 'heard (transcribe), spoken (speak) or fail',
    };
    const type = WORK_TYPES[kind] ?? 'work node';
    const article = /^[aeiou]/.test(type) ? 'an' : 'a';
    return new CaseStop(this.at, `"${nodeId}" is ${article} ${type}: mock it with ${takes[kind] ?? 'fail'}`);
  }

  /** A serviceTask: each attempt takes the next answer, through callHttp. */
  private async http(nodeId: string, call: Parameters<typeof callHttp>[0]): Promise<WorkResult> {
    let stopped: CaseStop | null = null;
    const reply = (): HttpReply => {
      try {
        const a = this.next(nodeId);
        if ('status' in a || 'timeout' in a || 'network' in a) return a;
        throw this.wrongKind(nodeId, 'http');
      } catch (err) {
        stopped = err as CaseStop;
        return { network: 'the case stopped' };
      }
    };
    const result = await callHttp(call, { reply, wait: () => Promise.resolve(true) });
    if (stopped !== null) throw stopped;
    return result;
  }

  /**
   * An aiTask's or callAgent's model call: a callAgent's MCP servers listed first (mcp-mocks.ts),
   * then each request to the model takes the next answer, through the model runner.
   */
  private async model(
    order: WorkOrder,
    nodeId: string,
    request: Extract<WorkRequest, { kind: 'ai' }>,
  ): Promise<WorkResult> {
    let call = request.call;
    let listed: readonly McpListedTool[] | null = null;
    if (request.mcp !== undefined) {
      const servers = await this.mcp(nodeId).list(order, request, NOT_ABORTED);
      if (!servers.ok) return servers;
      const offered = new Set(servers.tools.map((t) => t.tool));
      const unlisted = mockedTools(this.mocks, nodeId).find((tool) => !offered.has(tool));
      if (unlisted !== undefined)
        throw new CaseStop(
          this.at,
          `"${nodeId}.${unlisted}" mocks an MCP tool no server of "${nodeId}" offers: their allow lists leave it out`,
        );
      ({ call, tools: listed } = servers);
    }
    const first = this.next(nodeId);
    if ('fail' in first) return { ok: false, code: first.fail.code as never, message: first.fail.message };
    const names = new Set((call.tools ?? []).map((t) => t.name));
    let pending: MockAnswer | null = first;
    let stopped: CaseStop | null = null;
    const kind: ProviderKind = {
      request: (): Promise<ModelOutcome> => {
        try {
          const a = pending ?? this.next(nodeId);
          pending = null;
          if ('reply' in a)
            return Promise.resolve(answerOf(typeof a.reply === 'string' ? a.reply : JSON.stringify(a.reply)));
          if ('toolCalls' in a) {
            const unknown = listed === null ? undefined : a.toolCalls.find((t) => !names.has(t.name));
            if (unknown !== undefined)
              throw new CaseStop(
                this.at,
                `NO_MOCK: callAgent "${nodeId}" calls ${unknown.name}, which none of its tools is: ` +
                  `mock its MCP servers' tool under "${nodeId}.${unknown.name}"`,
              );
            return Promise.resolve({
              ...answerOf(''),
              finishReason: 'tool_calls',
              toolCalls: a.toolCalls.map((t, i) => ({
                id: `call-${i + 1}`,
                name: t.name,
                arguments: JSON.stringify(t.arguments),
              })),
            });
          }
          throw this.wrongKind(nodeId, 'ai');
        } catch (err) {
          stopped = err as CaseStop;
          return Promise.resolve({ kind: 'fatal', code: 'AI_MODEL_UNAVAILABLE', message: 'the case stopped' });
        }
      },
      close: () => Promise.resolve(),
    };
    const runner = createAiRunner({ kinds: { 'openai-compatible': kind, local: kind } });
    const result = await runner.run(call, () => MOCK_PROVIDER, { signal: NOT_ABORTED });
    await runner.close();
    if (stopped !== null) throw stopped;
    // The step routes each call by the tools this turn offered, as the work runner's result says.
    return listed === null || !result.ok
      ? result
      : { ...result, value: { ...(result.value as object), mcpTools: listed } };
  }

  /**
   * Agent `nodeId`'s MCP servers: the case's mocks of their tools, or, with none and the
   * network allowed, the real servers. Header secrets take the case's values either way.
   */
  private mcp(nodeId: string): McpWork {
    const tools = mockedTools(this.mocks, nodeId);
    const real = tools.length === 0 && this.setting.allowNetwork;
    return new McpWork({
      network: undefined,
      openSecrets: (_order, byToken) => Promise.resolve(this.openSecrets(byToken)),
      log: () => {},
      ...(!real && {
        client: mockedMcpClient(
          tools,
          (tool) => {
            if (this.mocks[`${nodeId}.${tool}`] === undefined)
              throw new CaseStop(
                this.at,
                `NO_MOCK: MCP tool ${tool} of "${nodeId}" has no mock: give it one under "${nodeId}.${tool}"`,
              );
            return this.next(`${nodeId}.${tool}`);
          },
          (tool) =>
            new CaseStop(this.at, `"${nodeId}.${tool}" is an MCP tool: mock it with result, text, error or fail`),
        ),
      }),
    });
  }
}

/** Work in a case is never aborted: the case stops by throwing. */
const NOT_ABORTED = new AbortController().signal;

/** A model's answer of `text`, as a provider reports it. */
function answerOf(text: string): Extract<ModelOutcome, { kind: 'answer' }> {
  return { kind: 'answer', text, model: 'mock', finishReason: 'stop', usage: { inputTokens: 0, outputTokens: 0 } };
}
