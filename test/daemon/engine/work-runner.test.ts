import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { Engine } from '../../../src/daemon/engine/engine.js';
import type { WorkResult } from '../../../src/daemon/outbound/result.js';
import { publishFlow } from '../../../src/daemon/flows/publish.js';
import { WFX_STORE, type WfxRecord } from '../../../src/daemon/state/records.js';
import { STATE, STATUS, type WfxState } from '../../../src/daemon/state/state.js';
import { History } from '../../../src/daemon/store/history.js';
import { Store } from '../../../src/daemon/store/store.js';
import { validateFlowSource } from '../../../src/shared/flow/validate.js';

const FLOW = `processId: 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11
name: Call
nodes:
  start: { type: startEvent, next: call }
  call: { type: serviceTask, url: "http://127.0.0.1:1/x", next: done }
  done: { type: endEvent }
`;

t.test(
  'a work result whose handling throws fails the node visibly (INTERNAL_ERROR); a restart does not call again',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'wfx-work-result-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    let calls = 0;
    const errors: unknown[] = [];
    // A BigInt cannot be journaled: the step that handles this result throws (before it applies anything).
    const http = async (): Promise<WorkResult> => (
      calls++,
      { ok: true, value: { status: 200, headers: {}, body: 10n } }
    );
    const open = async () => {
      const store = await Store.open<WfxState, WfxRecord>({ dir, ...WFX_STORE });
      const history = await History.open(join(dir, 'history'));
      const engine = new Engine({ store, history, http, onError: (err) => errors.push(err) });
      await engine.recover();
      return {
        store,
        history,
        engine,
        close: async () => (await engine.close(), await store.close(), await history.close()),
      };
    };
    const first = await open();
    const v = validateFlowSource(FLOW);
    if (!v.ok) throw new Error(JSON.stringify(v.problems));
    await publishFlow(first.store, {
      definition: v.flow,
      organization: 'default',
      environment: 'PRODUCTION',
      now: new Date(),
    });
    const finished = once(first.engine, 'finished');
    const inst = await first.engine.start({
      processId: '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11',
      organization: 'default',
      data: {},
    });
    await finished;
    const failed = (await first.engine.getInstance({ organization: null }, inst.processInstanceId))!;
    t.equal(failed.stateCd, STATE.FAILED, 'the execution Failed');
    t.match(failed.error, { code: 'INTERNAL_ERROR', nodeId: 'call' });
    t.match(
      Object.values(failed.nodes).find((n) => n.nodeId === 'call'),
      { statusCd: STATUS.FAILED },
    );
    t.equal(errors.length, 1, 'the throw is reported to the daemon log');
    t.equal(store(first).failed, null, 'the store did not fail');
    await first.close();
    const second = await open();
    t.teardown(() => second.close());
    t.equal(calls, 1, 'a restart does not make the call again');
    t.equal((await second.engine.getInstance({ organization: null }, inst.processInstanceId))?.stateCd, STATE.FAILED);
  },
);

const store = (o: { store: Store<WfxState, WfxRecord> }) => o.store;
