import type { Test } from 'tap';
import { Scheduler } from '../../src/daemon/triggers/schedules.js';
import type { EngineHarness } from './engine.js';

/** A flow with one schedule trigger (`extra`: more of its fields), each run waiting at an input node. */
export const SCHEDULED_FLOW = (cron: string, extra = '') => `
processId: AUTO
name: Every five minutes
triggers:
  - { type: schedule, cron: "${cron}"${extra} }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** A started scheduler on the harness's store, engine and clock; a failure fails `t`; closed at teardown. */
export async function scheduler(t: Test, h: EngineHarness): Promise<Scheduler> {
  const s = new Scheduler({
    store: h.store,
    engine: h.engine,
    now: h.clock.now,
    onError: (err) => t.fail(`the scheduler failed: ${String(err)}`),
  });
  t.teardown(() => s.close());
  await s.start();
  return s;
}
