/**
 * What applying a step's records costs beside the step (a script, not part of `npm run bench`):
 * the in-memory step (test/helpers/step.ts) starts the 5-node flow, then answers executions
 * waiting at an input node, and each step's records are applied again to a second state that
 * took every record before them. The second application is what a step deciding on a draft
 * would add if the runner then applied its records to the live state (decision 101).
 *
 *   npm run build && node dist/bench/step-apply.js
 */
import { applyRecord, type WfxRecord } from '../src/daemon/state/records.js';
import { initialState, type WfxState } from '../src/daemon/state/state.js';
import { MemoryStep } from '../test/helpers/step.js';
import { FIVE_NODE_FLOW, WAITS } from './engine.js';

const N = Number(process.env.BENCH_STEPS ?? 20_000);
/** Steps before these are not counted (the JIT warming up). */
const WARM = N / 10;

/** Times `step` N times: the step itself, and its records applied again to `mirror`. */
function measure(label: string, mirror: WfxState, step: (i: number) => readonly WfxRecord[]): void {
  let stepNs = 0n;
  let applyNs = 0n;
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    const records = step(i);
    const t1 = process.hrtime.bigint();
    for (const r of records) applyRecord(mirror, r);
    const t2 = process.hrtime.bigint();
    if (i < WARM) continue;
    stepNs += t1 - t0;
    applyNs += t2 - t1;
  }
  const us = (ns: bigint) => (Number(ns) / (N - WARM) / 1000).toFixed(1);
  const ratio = (Number(applyNs) / Number(stepNs)).toFixed(2);
  console.log(
    `${label}: the step ${us(stepNs)} µs, its records applied again ${us(applyNs)} µs (${ratio} of the step)`,
  );
}

const m = new MemoryStep({ frozen: false });
const mirror = initialState();
const own = (flow: string) => flow.replace(/^processId: .*$/m, 'processId: AUTO');
const five = await m.publish(own(FIVE_NODE_FLOW));
const waits = await m.publish(own(WAITS));
// The mirror reads the same flows; everything else it gets from the steps' records.
mirror.flows = m.state.flows;
mirror.organizations = m.state.organizations;

measure('a start of the 5-node flow', mirror, (i) => {
  m.ms += 1;
  return m.start(five, { orderId: i, amount: 5 }).records;
});
const ids: string[] = [];
for (let i = 0; i < N; i++) {
  m.ms += 1; // a start a millisecond: within the org-starts-per-second limit
  const r = m.start(waits, { kind: 'task' });
  for (const rec of r.records) applyRecord(mirror, rec);
  ids.push(r.answer.processInstanceId);
}
measure('an answer to an input node', mirror, (i) => {
  m.ms += 1;
  const input = { instanceId: ids[i]!, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'y' } } as const;
  return m.run({ kind: 'answer', ...input }).records;
});
