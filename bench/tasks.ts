/**
 * The list of waiting tasks (a script, not part of `npm run bench`): an engine in this process
 * on a JSON store, 100,000 executions waiting on messages (each its own correlation key) and
 * 100 waiting on input, then GET /process/tasks?limit=50 as the route answers it
 * (`waitingTasks`), beside the full scan it answered with before the task index (the tests' oracle,
 * test/helpers/derived-oracle.ts). Prints p50 / max of each over REPEAT calls.
 *
 *   npm run build && node dist/bench/tasks.js
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../src/daemon/engine/engine.js';
import { waitingTasks } from '../src/daemon/engine/tasks.js';
import { publishFlow } from '../src/daemon/flows/publish.js';
import { ExecutionTable } from '../src/daemon/state/execution-table.js';
import { WFX_STORE, type WfxRecord } from '../src/daemon/state/records.js';
import type { WfxState } from '../src/daemon/state/state.js';
import { History } from '../src/daemon/store/history.js';
import { Store } from '../src/daemon/store/store.js';
import { validateFlowSource } from '../src/shared/flow/validate.js';
import { tasksByScan } from '../test/helpers/derived-oracle.js';
import { UNPACED_LIMITS } from './daemon.js';

const MESSAGE_WAITS = Number(process.env.BENCH_MESSAGE_WAITS ?? 100_000);
const INPUT_WAITS = Number(process.env.BENCH_INPUT_WAITS ?? 100);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 50);

const flows = {
  paid: `
processId: 0192f0c0-0000-7000-8000-0000000000b1
name: Paid
nodes:
  start: { type: startEvent, next: wait }
  wait: { type: intermediateCatchEvent, eventType: message, messageRef: paid, next: done }
  done: { type: endEvent }
`,
  ask: `
processId: 0192f0c0-0000-7000-8000-0000000000b2
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`,
};

async function time(what: string, fn: () => unknown): Promise<void> {
  const ms: number[] = [];
  for (let i = 0; i < REPEAT; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const p50 = ms[Math.floor(ms.length / 2)]!;
  console.log(`${what}: p50 ${p50.toFixed(3)} ms, max ${ms.at(-1)!.toFixed(3)} ms`);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-tasks-'));
  try {
    const store = await Store.open<WfxState, WfxRecord>({ dir, ...WFX_STORE });
    const history = await History.open(join(dir, 'history'));
    const engine = new Engine({ store, history, limits: UNPACED_LIMITS });
    await engine.recover();
    await store.commit({ type: 'organization.created', name: 'default', at: new Date().toISOString() });
    const ids: Record<string, string> = {};
    for (const [name, source] of Object.entries(flows)) {
      const v = validateFlowSource(source);
      if (!v.ok) throw new Error(`bench flow ${name} does not validate`);
      const published = await publishFlow(store, {
        definition: v.flow,
        organization: 'default',
        environment: 'PRODUCTION',
      });
      ids[name] = published.processId;
    }
    const t0 = performance.now();
    const starts: Array<Promise<unknown>> = [];
    for (let i = 0; i < MESSAGE_WAITS + INPUT_WAITS; i++) {
      const processId = i % Math.floor(MESSAGE_WAITS / INPUT_WAITS + 1) === 0 ? ids.ask! : ids.paid!;
      starts.push(engine.start({ organization: 'default', processId, correlationKey: `k${i}`, data: {} }));
      if (starts.length === 200) await Promise.all(starts.splice(0));
    }
    await Promise.all(starts);
    const state = store.state;
    const live = [...ExecutionTable.of(state).live()].length;
    console.log(`${live} live executions started in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const filter = { organization: 'default', limit: 50 };
    const a = JSON.stringify(await waitingTasks(state, engine.executions, filter));
    if (a !== JSON.stringify(tasksByScan(state, filter))) throw new Error('the index and the scan answer differently');
    console.log(`${tasksByScan(state, { organization: null, limit: 1e9 }).items.length} tasks waiting`);
    await time('GET /process/tasks?limit=50, the full scan (before)', () => tasksByScan(state, filter));
    await time('GET /process/tasks?limit=50, the task index (after)', () =>
      waitingTasks(state, engine.executions, filter),
    );
    await engine.close();
    await store.close();
    await history.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
