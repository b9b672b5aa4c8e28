/**
 * Every YAML example of the docs, checked: a reader copies them, so each must be what wfx takes.
 * Each ```yaml block of docs/*.md and README.md is read as one of:
 * - a flow, or a part of one (flow properties such as `inputs:` or `triggers:`, or nodes): it is
 *   completed into a whole flow (a startEvent before the first node, an endEvent for each target
 *   the example leaves out, `...` lines dropped) and must validate with no problem but
 *   UNREACHABLE (a part may hold nodes its own excerpt does not connect);
 * - anything else (a domain file, say): it must parse as YAML.
 * The examples of docs/flows.md that can run offline run on the engine too (RUNS below): to the
 * end, or to a wait, and must end as RUNS says (the path taken, variables, output, the wait).
 * A failure names the doc's file and line.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { STATE, STATUS } from '../../src/daemon/state/state.js';
import { validateFlowValue, type FlowProblem } from '../../src/shared/flow/validate.js';
import { engineHarness, trail } from '../helpers/engine.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const FLOW_KEYS = new Set(['processId', 'name', 'description', 'public', 'inputs', 'triggers', 'nodes']);
const PID = '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11';

interface Example {
  readonly where: string;
  readonly text: string;
}

/** An example's value; `...` lines (what the excerpt leaves out) dropped. Throws when not YAML. */
const read = (ex: Example): unknown =>
  parse(
    ex.text
      .split('\n')
      .filter((l) => l.trim() !== '...')
      .join('\n'),
  );

function examples(): Example[] {
  const out: Example[] = [];
  for (const file of DOCS) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (lines[i]!.trim() !== '```yaml') continue;
      let j = i + 1;
      while (j < lines.length && lines[j]!.trim() !== '```') j++;
      out.push({ where: `${file}:${i + 2}`, text: lines.slice(i + 1, j).join('\n') });
      i = j;
    }
  }
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The example as a whole flow, or null when it is no part of a flow. */
function asFlow(value: unknown): Record<string, unknown> | null {
  if (!isRecord(value)) return null;
  const keys = Object.keys(value);
  let flow: Record<string, unknown>;
  if (keys.some((k) => FLOW_KEYS.has(k)) && keys.every((k) => FLOW_KEYS.has(k))) flow = { ...value };
  else if (keys.length > 0 && Object.values(value).every((n) => isRecord(n) && typeof n.type === 'string'))
    flow = { nodes: value };
  else return null;
  flow.processId ??= PID;
  flow.name ??= 'Example';
  const nodes = { ...((flow.nodes as Record<string, Record<string, unknown>> | undefined) ?? {}) };
  if (!Object.values(nodes).some((n) => n.type === 'startEvent')) {
    const first = Object.keys(nodes)[0];
    nodes.start = first === undefined ? { type: 'startEvent', next: 'end' } : { type: 'startEvent', next: first };
  }
  flow.nodes = nodes;
  return flow;
}

/** Validates `flow`, adding an endEvent for each target it names but leaves out. */
function validateCompleted(flow: Record<string, unknown>): FlowProblem[] {
  const nodes = flow.nodes as Record<string, unknown>;
  for (let round = 0; round < 10; round++) {
    const v = validateFlowValue(flow);
    if (v.ok) return [];
    const missing = v.problems
      .filter((p) => p.code === 'UNKNOWN_TARGET' || (p.code === 'SCHEMA' && /attachedTo/.test(p.property ?? '')))
      .map((p) => /"([^"]+)"/.exec(p.message)?.[1])
      .filter((id): id is string => id !== undefined && !(id in nodes));
    if (missing.length === 0) return v.problems.filter((p) => p.code !== 'UNREACHABLE');
    const attached = new Set(Object.values(nodes).map((n) => (isRecord(n) ? n.attachedTo : undefined)));
    for (const id of missing) {
      // A boundary event needs a node that can carry it; any other target may just end.
      nodes[id] = attached.has(id) ? { type: 'task', next: 'example_end' } : { type: 'endEvent' };
      if (attached.has(id)) nodes.example_end ??= { type: 'endEvent' };
    }
  }
  return validateFlowValue(flow).problems.filter((p) => p.code !== 'UNREACHABLE');
}

const ALL = examples();

t.test('the docs have examples, and each is what wfx takes', async (t) => {
  t.ok(ALL.length >= 25, `${ALL.length} examples found`);
  for (const ex of ALL) {
    let value: unknown;
    try {
      value = read(ex);
    } catch (err) {
      t.fail(`${ex.where}: not YAML: ${(err as Error).message}`);
      continue;
    }
    const flow = asFlow(value);
    if (!flow) {
      t.ok(value !== undefined, `${ex.where}: YAML (no part of a flow)`);
      continue;
    }
    const problems = validateCompleted(flow);
    t.same(
      problems.map((p) => `${p.nodeId ?? ''}.${p.property ?? ''}: ${p.message} [${p.code}]`),
      [],
      `${ex.where}: validates`,
    );
  }
});

/** `flow` without the nodes its start event cannot reach (a publish refuses them). */
function reachableOnly(flow: Record<string, unknown>): Record<string, unknown> {
  const nodes = { ...(flow.nodes as Record<string, unknown>) };
  for (let round = 0; round < 10; round++) {
    const unreachable = validateFlowValue({ ...flow, nodes }).problems.filter((p) => p.code === 'UNREACHABLE');
    if (unreachable.length === 0) break;
    for (const p of unreachable) delete nodes[p.nodeId!];
  }
  return { ...flow, nodes };
}

/** How a run of an example must end: at the end (completed), or waiting at a node. */
type Outcome = 'end' | { readonly waitingAt: string };

/** One run of an example: from which of its nodes, with what variables, to what end. */
interface Run {
  /** The node the run starts at (default: the example's first). */
  readonly from?: string;
  readonly data: Record<string, unknown>;
  readonly outcome: Outcome;
  /** To the end: the node ids the execution passed through, in order (the start event first). */
  readonly trail?: readonly string[];
  /** To the end: matched against the finished execution (variables, output). To a wait: against the waiting node (its wait). */
  readonly expect?: Record<string, unknown>;
}

const ORDER = { id: 'A1', amount: 250, total: 250, lines: [{ qty: 2, price: 3 }], customer: { name: 'Ada' } };

/**
 * The examples of docs/flows.md that run offline, each found by a node id only it has, and how
 * each run must end. The others need a model, a network, a worker, another published flow or a
 * speech engine, and are validated only.
 */
const RUNS: Record<string, readonly Run[]> = {
  work: [{ data: {}, outcome: 'end', trail: ['start', 'work', 'done'] }],
  prepare: [
    {
      data: { order: ORDER },
      outcome: 'end',
      trail: ['start', 'prepare', 'publish', 'done'],
      expect: {
        variables: { total: 250, label: 'order A1', decision: 'approved', orderId: 'A1' },
        output: { decision: 'approved', orderId: 'A1' },
      },
    },
  ],
  decide: [
    { data: { formData: { approve: true }, order: ORDER }, outcome: 'end', trail: ['start', 'decide', 'approved'] },
    { data: { formData: { approve: false }, order: ORDER }, outcome: 'end', trail: ['start', 'decide', 'refused'] },
  ],
  route: [
    { data: { amount: 5000 }, outcome: 'end', trail: ['start', 'route', 'manager'] },
    { data: { amount: 500 }, outcome: 'end', trail: ['start', 'route', 'clerk'] },
    { data: { amount: 5 }, outcome: 'end', trail: ['start', 'route', 'auto'] },
    {
      from: 'reviews',
      data: { legal: true, security: true },
      outcome: 'end',
      trail: ['start', 'reviews', 'legal', 'security'],
    },
    { from: 'reviews', data: { legal: false, security: false }, outcome: 'end', trail: ['start', 'reviews', 'none'] },
    { from: 'fork', data: {}, outcome: 'end', trail: ['start', 'fork', 'a', 'b', 'c'] },
  ],
  ask: [
    {
      data: { order: ORDER },
      outcome: { waitingAt: 'ask' },
      expect: { wait: { kind: 'input', inputType: 'form', formTitle: 'Approve order A1?' } },
    },
  ],
  review: [
    {
      data: { reviewer: 'ada' },
      outcome: { waitingAt: 'review' },
      expect: { wait: { kind: 'input', formTitle: 'Review the order', assignee: 'ada' } },
    },
  ],
  payment: [
    {
      data: { orderId: 7 },
      outcome: { waitingAt: 'payment' },
      expect: { wait: { kind: 'event', eventType: 'message', messageRef: 'payment-received', correlationKey: 'order-7' } },
    },
    {
      from: 'nap',
      data: {},
      outcome: { waitingAt: 'nap' },
      expect: { wait: { kind: 'timer', dueAt: '2026-11-22T10:00:00.000Z' } },
    },
  ],
  announce: [{ data: { orderId: 7 }, outcome: 'end', trail: ['start', 'announce', 'done'] }],
  price: [
    {
      data: { order: { lines: [{ qty: 2, price: 3 }, { qty: 1, price: 5 }] } },
      outcome: 'end',
      trail: ['start', 'price', 'sum'],
      expect: { variables: { lineTotal: [6, 5] } },
    },
  ],
  // The embedded child waits at its input node; its parent at `pack`, for the child.
  pack: [{ data: { order: ORDER }, outcome: { waitingAt: 'packed' }, expect: { wait: { kind: 'input', inputType: 'date' } } }],
  sum: [
    {
      data: { lineTotal: [2, 3, 5] },
      outcome: 'end',
      trail: ['start', 'sum', 'notify'],
      expect: { variables: { total: 10 } },
    },
  ],
  remember: [
    {
      data: { customer: { id: 'c-42' }, ticket: { id: 't-1' }, triage: { data: { category: 'billing' } } },
      outcome: 'end',
      trail: ['start', 'remember', 'done'],
      expect: { variables: { history: { length: 1 } } },
    },
  ],
};

t.test('the examples of docs/flows.md that can run offline run, to their end or to their wait', async (t) => {
  const h = await engineHarness(t);
  const found: string[] = [];
  for (const ex of ALL.filter((e) => e.where.startsWith('docs/flows.md:'))) {
    const flow = asFlow(read(ex));
    const name = flow && Object.keys(flow.nodes as object).find((id) => id in RUNS);
    if (!flow || !name) continue;
    found.push(name);
    validateCompleted(flow);
    const nodes = flow.nodes as Record<string, Record<string, unknown>>;
    const start = Object.keys(nodes).find((id) => nodes[id]!.type === 'startEvent')!;
    for (const [i, run] of RUNS[name]!.entries()) {
      const what = `${ex.where} (${name}, run ${i + 1}: from ${run.from ?? nodes[start]!.next})`;
      const from = reachableOnly({
        ...flow,
        nodes: { ...nodes, [start]: { ...nodes[start], next: run.from ?? nodes[start]!.next } },
      });
      const pid = await h.publish(stringify({ ...from, processId: 'AUTO' }));
      const started = await h.start(pid, run.data);
      const outcome = run.outcome;
      // Its own events only: each run publishes a flow of its own (an embedded child runs the same).
      const ended = await h.waitFor(
        (e) =>
          e.processId === pid &&
          ((e.processInstanceId === started.processInstanceId && /^PROCESS_(COMPLETED|FAILED)$/.test(e.type)) ||
            (outcome !== 'end' && e.type === 'NODE_WAITING' && e.nodeId === outcome.waitingAt)),
      );
      const inst = await h.get(started.processInstanceId);
      if (outcome === 'end') {
        t.equal(ended.type, 'PROCESS_COMPLETED', `${what}: runs to its end${inst.error ? `, not ${inst.error.code}` : ''}`);
        t.equal(inst.stateCd, STATE.COMPLETED, `${what}: completed`);
        t.same(
          trail(inst).map((s) => s.split(':')[0]),
          run.trail,
          `${what}: through ${run.trail?.join(', ')}`,
        );
        if (run.expect) t.match(inst, run.expect, `${what}: its variables and output`);
      } else {
        t.equal(ended.type, 'NODE_WAITING', `${what}: waits at ${outcome.waitingAt}${inst.error ? `, not ${inst.error.code}` : ''}`);
        t.equal(inst.stateCd, STATE.RUNNING, `${what}: still running`);
        const where = await h.get(ended.processInstanceId);
        const node = Object.values(where.nodes).find((n) => n.nodeId === outcome.waitingAt);
        t.equal(node?.statusCd, STATUS.WAITING, `${what}: ${outcome.waitingAt} waits`);
        if (run.expect) t.match(node, run.expect, `${what}: for what it should`);
        if (ended.processInstanceId !== started.processInstanceId)
          t.match(
            Object.values(inst.nodes).find((n) => n.statusCd === STATUS.WAITING),
            { nodeId: name, wait: { kind: 'child' } },
            `${what}: the parent waits at ${name} for its child`,
          );
      }
    }
  }
  t.same(found.sort(), Object.keys(RUNS).sort(), 'each runnable example was found, once');
});
