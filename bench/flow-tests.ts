/**
 * Flow tests benchmark (`npm run bench:flow-tests`): 1,000 cases of `wfx test` over a flow whose
 * timers are days apart (an input deadline of 2 days, a 3-day wait, a boundary timer of a week)
 * and a mocked serviceTask with a retry, run as `wfx test` runs them (files read, flows
 * validated, each case on the step in memory). Target: under 5 s on a 2-core machine. Writes its
 * section of docs/benchmarks/flow-tests.md.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runFlowTests, totals } from '../src/daemon/flow-tests/entry.js';
import { machineLine, writeSection } from './report.js';

/** Cases in all, over the four kinds below. */
const CASES = 1000;
/** Runs measured after one warm-up. */
const RUNS = 3;

const FLOW = `processId: 2f9c1e7a-4b3d-4c8e-9a1f-6e5d4c3b2a19
name: Slow approvals
nodes:
  start: { type: startEvent, next: review }
  review:
    type: inputNode
    inputType: textbox
    timeout: 2d
    timeoutFlow: expired
    errorFlow: refused
    next: settle
  settle: { type: intermediateCatchEvent, eventType: timer, duration: 3d, next: charge }
  charge:
    type: serviceTask
    method: POST
    url: "https://pay.example/charge"
    retry: { maxAttempts: 3, initialInterval: 1h }
    next: confirm
  confirm: { type: intermediateCatchEvent, eventType: message, messageRef: confirmed, next: done }
  week: { type: boundaryEvent, attachedTo: confirm, event: timer, duration: 7d, next: late }
  late: { type: setVariable, variables: { late: true }, next: done }
  expired: { type: endEvent }
  refused: { type: endEvent }
  done: { type: endEvent }
`;

/** Case `i`: one of four paths, each over timers days apart. */
function testCase(i: number): string {
  const head = `  - name: case ${i}\n    start: { data: { n: ${i} }, correlationKey: k${i} }\n`;
  switch (i % 4) {
    case 0: // answered, charged after a retry, confirmed
      return `${head}    mocks: { charge: [ { status: 503 }, { status: 200, body: { id: ${i} } } ] }
    steps:
      - answer: { node: review, data: { inputValue: ok } }
      - advance: 3d
      - event: { type: confirmed, correlationKey: k${i} }
    expect: { state: COMPLETED, path: [start, review, settle, charge, confirm, done] }
`;
    case 1: // no confirmation within a week
      return `${head}    mocks: { charge: { status: 200 } }
    steps:
      - answer: { node: review, data: { inputValue: ok } }
      - advance: 10d
    expect: { state: COMPLETED, variables: { late: true } }
`;
    case 2: // the deadline passes
      return `${head}    steps:
      - advance: 2d
    expect: { state: COMPLETED, path: [start, review, expired] }
`;
    default: // refused
      return `${head}    steps:
      - answer: { node: review, action: CANCEL }
    expect: { state: COMPLETED, path: [start, review, refused] }
`;
  }
}

export interface FlowTestsBenchResult {
  readonly cases: number;
  /** Each measured run's wall time for all the cases, in ms. */
  readonly runsMs: readonly number[];
}

export async function runFlowTestsBench(): Promise<FlowTestsBenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-flow-tests-'));
  try {
    await writeFile(join(dir, 'slow.yaml'), FLOW);
    const cases = Array.from({ length: CASES }, (_, i) => testCase(i)).join('');
    await writeFile(join(dir, 'slow.test.yaml'), `flow: slow.yaml\ncases:\n${cases}`);
    const runsMs: number[] = [];
    for (let run = 0; run <= RUNS; run++) {
      const t0 = performance.now();
      const r = await runFlowTests({ paths: [dir], cwd: dir });
      const ms = performance.now() - t0;
      const t = totals(r);
      if (r.problems.length > 0 || t.failed > 0 || t.passed !== CASES)
        throw new Error(`the bench's cases did not all pass: ${JSON.stringify({ ...t, problems: r.problems })}`);
      if (run > 0) runsMs.push(ms);
    }
    return { cases: CASES, runsMs };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function formatFlowTestsBench(r: FlowTestsBenchResult): string {
  const sorted = [...r.runsMs].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return [
    `| ${r.cases.toLocaleString('en')} cases of \`wfx test\` (timers days apart, a mocked serviceTask), median of ${r.runsMs.length} runs | target |`,
    '|---|---|',
    `| ${(median / 1000).toFixed(2)} s in all, ${((median * 1000) / r.cases).toFixed(0)} µs a case | under 5 s |`,
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = formatFlowTestsBench(await runFlowTestsBench());
  console.log(table);
  await writeSection('flow-tests', `${machineLine()}\n\n${table}`);
  console.log('\nwritten to docs/benchmarks/');
}
