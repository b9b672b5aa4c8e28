/**
 * `wfx test record ID`: an ended execution as a flow test case (docs/testing.md, "A real
 * execution as a test"). Read from what the API gives of it and of the executions under it (their
 * nodes, logs and variables): the start data, the answers people gave and the events that came,
 * each at its time on the test's clock, every work node's result as its mock, and its path and end
 * as the expectation. Pure: the caller fetches, this shapes. Environment values are not copied
 * (they may be secrets): each `{env.NAME}` the flows use gets a placeholder; file contents are
 * never read.
 */
import { STATUS } from '../shared/api/index.js';
import type { InstanceView, LogEntry, NodeView } from '../shared/api/index.js';
import { resolveTemplate } from '../shared/expr/template.js';
import type { FlowDefinition, FlowNode } from '../shared/flow/types.js';

/** An execution as fetched: its view and its log. */
export interface Fetched {
  readonly view: InstanceView;
  readonly logs: readonly LogEntry[];
}

/** What a recorded case is made from: the execution and those under it (children, tool calls, loop iterations). */
export interface Recording {
  readonly root: Fetched;
  readonly under: readonly Fetched[];
  /** The flow definitions of the executions, by processId. */
  readonly flows: ReadonlyMap<string, FlowDefinition>;
}

type Step = Record<string, unknown>;

/** Response headers not copied into a mock: they may carry credentials. */
const PRIVATE_HEADERS = /^(set-cookie|authorization|proxy-authorization|cookie|x-api-key)$/i;

/** The variables as they were just before log line `i` of `logs` (the last copy before it). */
function variablesBefore(logs: readonly LogEntry[], i: number): Record<string, unknown> {
  for (let j = i - 1; j >= 0; j--) if (logs[j]!.variables) return logs[j]!.variables!;
  return {};
}

/** The `completed` (or other ending) log line of each node instance of `f`, by node instance, in order. */
function endings(f: Fetched): Map<NodeView, number> {
  const seen = new Map<string, number>();
  const out = new Map<NodeView, number>();
  const ends = f.logs
    .map((l, i) => ({ l, i }))
    .filter(({ l }) => l.nodeId !== '' && /^(completed|cancelled|failed|timed out)\b/.test(l.message));
  for (const ni of f.view.nodes) {
    const k = seen.get(ni.nodeId) ?? 0;
    const found = ends.filter(({ l }) => l.nodeId === ni.nodeId)[k];
    seen.set(ni.nodeId, k + 1);
    if (found) out.set(ni, found.i);
  }
  return out;
}

/** What changed in the variables at log line `i`: the keys whose values differ from before it. */
function changedAt(logs: readonly LogEntry[], i: number): Record<string, unknown> {
  const before = variablesBefore(logs, i);
  const after = logs[i]!.variables ?? {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(after)) if (JSON.stringify(before[k]) !== JSON.stringify(v)) out[k] = v;
  return out;
}

/** A serviceTask's failure code as the answer that gives it again, or null (a failure before any attempt). */
function httpAnswerOf(code: string, message: string): unknown {
  const status = /^HTTP_(\d{3})$/.exec(code);
  if (status) return { status: Number(status[1]) };
  if (code === 'HTTP_TIMEOUT') return { timeout: true };
  if (code === 'HTTP_NETWORK') return { network: message.replace(/^.* failed: /, '') };
  return null;
}

/**
 * The mock answers a serviceTask's node instance took, one per attempt: each retried attempt as
 * its log says it (`attempt 1 failed (HTTP 503); retrying in 1s`), then the last, its result or
 * its failure.
 */
function httpAnswers(f: Fetched, ni: NodeView, def: FlowNode, end: number | undefined): unknown[] {
  const out: unknown[] = [];
  for (const l of f.logs) {
    if (l.nodeId !== ni.nodeId || l.timestamp < ni.startTime || (ni.endTime !== null && l.timestamp > ni.endTime))
      continue;
    const m = /^attempt \d+ failed \((?:HTTP (\d{3})|(timeout)\b.*|network error \((.*)\))\); retrying/.exec(l.message);
    if (m) out.push(m[1] ? { status: Number(m[1]) } : m[2] ? { timeout: true } : { network: m[3] });
  }
  if (end === undefined) return out;
  if (ni.statusCd === STATUS.FAILED) {
    const failure = failureOf(f.logs[end]!.message);
    const last = failure && httpAnswerOf(failure.code, failure.message);
    return last === null || last === undefined ? out : [...out, last];
  }
  if (ni.statusCd !== STATUS.COMPLETED) return out;
  const resultVariable =
    ('resultVariable' in def && typeof def.resultVariable === 'string' && def.resultVariable) || ni.nodeId;
  const value = (f.logs[end]!.variables ?? {})[resultVariable] as
    { status?: number; headers?: Record<string, unknown>; body?: unknown } | undefined;
  const headers: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value?.headers ?? {})) if (!PRIVATE_HEADERS.test(k)) headers[k] = v;
  return [...out, { status: value?.status ?? 200, ...(value?.body !== undefined && { body: value.body }), headers }];
}

/** The code and message of a node's `failed: CODE: message` log line, or null. */
function failureOf(line: string): { code: string; message: string } | null {
  const m = /^failed: ([A-Z][A-Z0-9_]+):\s*(.*)$/s.exec(line);
  return m ? { code: m[1]!, message: m[2]! } : null;
}

/** The failure a node ended with, as a `fail` mock, from its log. */
function failOf(f: Fetched, end: number | undefined): unknown {
  const failure = end === undefined ? null : failureOf(f.logs[end]!.message);
  return { fail: failure ?? { code: 'INTERNAL_ERROR', message: 'failed' } };
}

/** The mock answers of one work node instance (none: it runs for real, or is not work). */
function mockAnswers(f: Fetched, ni: NodeView, def: FlowNode, end: number | undefined): unknown[] {
  const failed = ni.statusCd === STATUS.FAILED;
  switch (def.type) {
    case 'serviceTask':
      return httpAnswers(f, ni, def, end);
    case 'aiTask': {
      if (failed) return [failOf(f, end)];
      const value = (end === undefined ? {} : (f.logs[end]!.variables ?? {}))[def.resultVariable ?? ni.nodeId] as
        { text?: string; data?: unknown } | undefined;
      return [{ reply: value?.data ?? value?.text ?? '' }];
    }
    case 'callAgent': {
      const turns = (ni.agent?.messages ?? [])
        .filter((m) => m.role === 'assistant')
        .map((m) =>
          m.role === 'assistant' && m.toolCalls && m.toolCalls.length > 0
            ? { toolCalls: m.toolCalls.map((c) => ({ name: c.name, arguments: parseArguments(c.arguments) })) }
            : { reply: m.content },
        );
      return failed ? [...turns, failOf(f, end)] : turns;
    }
    case 'domainTask': {
      if (failed) return [failOf(f, end)];
      const value = end === undefined ? undefined : (f.logs[end]!.variables ?? {})[ni.nodeId];
      return [{ result: value ?? {} }];
    }
    case 'voiceTask': {
      if (failed) return [failOf(f, end)];
      const value = (end === undefined ? {} : (f.logs[end]!.variables ?? {}))[def.resultVariable ?? ni.nodeId] as
        { text?: string; language?: string; durationMs?: number | null; bytes?: number } | undefined;
      if (def.operation === 'transcribe')
        return [{ heard: value?.text ?? '', ...(value?.language !== undefined && { language: value.language }) }];
      // The audio itself is not copied (file contents stay out of tests): its size and length are.
      return [
        {
          spoken: {
            ...(typeof value?.durationMs === 'number' && { durationMs: value.durationMs }),
            ...(value?.bytes !== undefined && { bytes: value.bytes }),
          },
        },
      ];
    }
    default:
      return [];
  }
}

/**
 * The answers of an agent's MCP tools, each under `AGENT.TOOL` (TOOL: its name on its server),
 * read from the tool messages the model got: a JSON object as `result`, other text as `text`, a
 * call the server did not answer (`CODE: message`) as `fail`, the tool's own error as `error`.
 * A call a person refused made no call; one under way at a crash and not repeated has no answer.
 */
function mcpAnswers(ni: NodeView): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  const messages = ni.agent?.messages ?? [];
  for (const c of ni.agent?.calls ?? []) {
    if (c.mcp === undefined || c.ok === null || c.approval === 'refused') continue;
    const content = messages.find((m) => m.role === 'tool' && m.toolCallId === c.id)?.content;
    if (content === undefined || content.startsWith('{"error":"the daemon stopped while this call ran')) continue;
    const parsed = parseArguments(content);
    let answer: unknown;
    if (!c.ok) {
      const text = errorOf(content) ?? content;
      const failure = /^([A-Z][A-Z0-9_]+): (.*)$/s.exec(text);
      answer = failure ? { fail: { code: failure[1], message: failure[2] } } : { error: text };
    } else if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && content.startsWith('{'))
      answer = { result: parsed };
    else answer = { text: content };
    out.push([`${ni.nodeId}.${c.mcp.tool}`, answer]);
  }
  return out;
}

/** An agent's approvals as the answers a person gave, each at the time its log line says. */
function approvalAnswers(f: Fetched, ni: NodeView): Array<{ at: string; step: Step }> {
  const calls = ni.agent?.calls ?? [];
  const messages = ni.agent?.messages ?? [];
  const out: Array<{ at: string; step: Step }> = [];
  for (const l of f.logs) {
    if (l.nodeId !== ni.nodeId || l.timestamp < ni.startTime || (ni.endTime !== null && l.timestamp > ni.endTime))
      continue;
    const m = /^tool \S+ \(([^)]+)\): (approved|refused by a person)(, with its arguments edited)?/.exec(l.message);
    const call = m && calls.find((c) => c.id === m[1]);
    if (!m || !call) continue;
    if (m[2] === 'approved') {
      const data = m[3] === undefined ? {} : { arguments: call.arguments };
      out.push({ at: l.timestamp, step: { answer: { node: ni.nodeId, data } } });
      continue;
    }
    const refusal = messages.find((x) => x.role === 'tool' && x.toolCallId === call.id)?.content ?? '';
    const reason = /^a person refused this call: (.*)$/s.exec(errorOf(refusal) ?? '')?.[1];
    const data = reason === undefined ? {} : { data: { reason } };
    out.push({ at: l.timestamp, step: { answer: { node: ni.nodeId, action: 'CANCEL', ...data } } });
  }
  return out;
}

/** The `error` of a tool message's `{"error": ...}` content. */
function errorOf(content: string): string | undefined {
  const parsed = parseArguments(content);
  const error = parsed !== null && typeof parsed === 'object' ? (parsed as { error?: unknown }).error : undefined;
  return typeof error === 'string' ? error : undefined;
}

const parseArguments = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return {};
  }
};

/** The nodes of `flow` by id, its bodies' too (a loop's or an embedded subprocess's nodes). */
function allNodes(
  nodes: Readonly<Record<string, FlowNode>>,
  into = new Map<string, FlowNode>(),
): Map<string, FlowNode> {
  for (const [id, def] of Object.entries(nodes)) {
    into.set(id, def);
    if ((def.type === 'loopNode' || def.type === 'subProcess') && def.nodes) allNodes(def.nodes, into);
  }
  return into;
}

/** `{env.NAME}` names a flow uses, anywhere in it. */
function envNames(flow: FlowDefinition): string[] {
  return [
    ...new Set([...JSON.stringify(flow).matchAll(/\{env\.([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!)),
  ].sort();
}

/** A duration of `ms` in the test file's words: in the largest unit (days to milliseconds) that divides it. */
function duration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/**
 * The case `r` records, named `name`: its start, mocks, steps and expected end, with the env
 * placeholders the flows need. `flows` (files of the flows other than the root's, as the test
 * file will name them) are given by the caller.
 */
export function recordedCase(
  r: Recording,
  name: string,
): { case: Record<string, unknown>; env: Record<string, string> } {
  const root = r.root;
  const view = root.view;
  const mocks = new Map<string, unknown[]>();
  const inputs: Array<{ at: string; step: Step }> = [];
  for (const f of [root, ...r.under]) {
    const flow = r.flows.get(f.view.processId);
    const defs = flow ? allNodes(flow.nodes) : new Map<string, FlowNode>();
    const ends = endings(f);
    for (const ni of [...f.view.nodes].sort((a, b) =>
      a.startTime < b.startTime ? -1 : a.startTime > b.startTime ? 1 : 0,
    )) {
      const def = defs.get(ni.nodeId);
      if (!def) continue;
      const end = ends.get(ni);
      const answers = mockAnswers(f, ni, def, end);
      if (answers.length > 0) mocks.set(ni.nodeId, [...(mocks.get(ni.nodeId) ?? []), ...answers]);
      if (def.type === 'callAgent')
        for (const [key, answer] of mcpAnswers(ni)) mocks.set(key, [...(mocks.get(key) ?? []), answer]);
      if (f !== root) continue; // answers and events reach the top execution's nodes only
      if (def.type === 'callAgent') inputs.push(...approvalAnswers(f, ni));
      if ((def.type === 'inputNode' || def.type === 'userTask') && ni.endTime !== null) {
        if (ni.statusCd === STATUS.CANCELLED && end !== undefined && /task was cancelled/.test(root.logs[end]!.message))
          inputs.push({ at: ni.endTime, step: { answer: { node: ni.nodeId, action: 'CANCEL' } } });
        else if (ni.statusCd === STATUS.COMPLETED && end !== undefined) {
          const changed = changedAt(root.logs, end);
          delete changed.inputNodeAction;
          const data = changed.formData ?? changed;
          inputs.push({ at: ni.answeredAt ?? ni.endTime, step: { answer: { node: ni.nodeId, data } } });
        }
      }
      if (def.type === 'intermediateCatchEvent' && def.eventType !== 'timer' && ni.statusCd === STATUS.COMPLETED) {
        const data = end === undefined ? {} : changedAt(root.logs, end);
        const event: Record<string, unknown> = { type: def.messageRef ?? '' };
        // The node's own key (a template over the variables it waited with), else the execution's.
        const key =
          def.correlationKey !== undefined && end !== undefined
            ? resolveTemplate(def.correlationKey, { vars: variablesBefore(root.logs, end), env: {} }).value
            : view.correlationKey;
        if (key !== null && key !== undefined) event.correlationKey = String(key);
        inputs.push({ at: ni.endTime!, step: { event: { ...event, data } } });
      }
    }
  }
  // Each input at its time on the test's clock: the time passed since the one before first.
  inputs.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const steps: Step[] = [];
  let now = Date.parse(view.startTime);
  // Gaps under a second are the time the daemon took, not time a flow waits for: left out.
  const advanceTo = (iso: string): void => {
    const ms = Date.parse(iso) - now;
    if (ms < 1000) return;
    steps.push({ advance: duration(ms) });
    now = Date.parse(iso);
  };
  for (const input of inputs) {
    advanceTo(input.at);
    steps.push(input.step);
  }
  if (view.endTime !== null) advanceTo(view.endTime); // timers that ended it fire
  const start = root.logs[0]?.variables ?? {};
  const env: Record<string, string> = {};
  for (const flow of r.flows.values())
    for (const n of envNames(flow)) env[n] = `https://${n.toLowerCase().replace(/_/g, '-')}.invalid`;
  const expect: Record<string, unknown> = { state: view.state, path: view.nodes.map((n) => n.nodeId) };
  if (view.data.error) expect.errorCode = view.data.error.code;
  return {
    case: {
      name,
      start: {
        data: start,
        ...(view.correlationKey !== null && { correlationKey: view.correlationKey }),
        ...(view.environment !== 'PRODUCTION' && { environment: view.environment }),
      },
      ...(mocks.size > 0 && {
        mocks: Object.fromEntries([...mocks].map(([id, answers]) => [id, answers.length === 1 ? answers[0] : answers])),
      }),
      ...(steps.length > 0 && { steps }),
      expect,
    },
    env,
  };
}
