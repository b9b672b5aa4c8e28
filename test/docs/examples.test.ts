/**
 * Every YAML example of the docs, checked: a reader copies them, so each must be what wfx takes.
 * Each ```yaml block of docs/*.md and README.md is read as one of:
 * - a flow, or a part of one (flow properties such as `inputs:` or `triggers:`, or nodes): it is
 *   completed into a whole flow (a startEvent before the first node, an endEvent for each target
 *   the example leaves out, `...` lines dropped) and must validate with no problem but
 *   UNREACHABLE (a part may hold nodes its own excerpt does not connect);
 * - anything else (a domain file, say): it must parse as YAML.
 * Examples that can run offline run on the engine too (RUNS below): to the end, or to a wait.
 * A failure names the doc's file and line.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { STATE } from '../../src/daemon/state/state.js';
import { validateFlowValue, type FlowProblem } from '../../src/shared/flow/validate.js';
import { engineHarness } from '../helpers/engine.js';

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

/** Examples that run offline, by the node they show, and the variables they read. */
const RUNS: Record<string, Record<string, unknown>> = {
  sum: { lineTotal: [2, 3, 5] },
  prepare: { order: { lines: [{ qty: 2, price: 3 }], customer: { name: 'Ada' } } },
};

t.test('the examples that can run offline run', async (t) => {
  const h = await engineHarness(t);
  let ran = 0;
  for (const ex of ALL) {
    const flow = asFlow(read(ex));
    const name = flow && Object.keys(flow.nodes as object).find((id) => id in RUNS);
    if (!flow || !name) continue;
    validateCompleted(flow);
    const pid = await h.publish(stringify({ ...flow, processId: 'AUTO' }));
    const started = await h.start(pid, RUNS[name]);
    const done = await h.waitFor(
      (e) => e.processInstanceId === started.processInstanceId && /^PROCESS_(COMPLETED|FAILED)$/.test(e.type),
    );
    const inst = await h.get(started.processInstanceId);
    t.equal(done.type, 'PROCESS_COMPLETED', `${ex.where}: runs to the end ${JSON.stringify(inst.error ?? null)}`);
    t.equal(inst.stateCd, STATE.COMPLETED);
    ran++;
  }
  t.equal(ran, Object.keys(RUNS).length, 'each runnable example was found');
});
