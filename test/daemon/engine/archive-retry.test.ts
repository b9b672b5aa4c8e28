import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { Engine } from '../../../src/daemon/engine/engine.js';
import { publishFlow } from '../../../src/daemon/flows/publish.js';
import { WFX_STORE, type WfxRecord } from '../../../src/daemon/state/records.js';
import { STATE, type WfxState } from '../../../src/daemon/state/state.js';
import { History } from '../../../src/daemon/store/history.js';
import { Store } from '../../../src/daemon/store/store.js';
import { validateFlowSource } from '../../../src/shared/flow/validate.js';

const FLOW = `
processId: 5a0c1e2d-3b4f-4a6b-8c7d-9e0f1a2b3c4d
name: Ask once
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

t.test(
  'an execution whose history write failed is archived by a later try, not left in memory until a restart',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'wfx-archive-retry-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const store = await Store.open<WfxState, WfxRecord>({ dir, ...WFX_STORE });
    const history = await History.open(join(dir, 'history'));
    const errors: unknown[] = [];
    const engine = new Engine({ store, history, onError: (err) => errors.push(err) });
    t.teardown(async () => {
      await engine.close();
      await store.close();
      await history.close();
    });
    await engine.recover();
    const v = validateFlowSource(FLOW);
    if (!v.ok) throw new Error(JSON.stringify(v.problems));
    await publishFlow(store, {
      definition: v.flow,
      organization: 'default',
      environment: 'PRODUCTION',
      now: new Date(),
    });
    const inst = await engine.start({
      processId: '5a0c1e2d-3b4f-4a6b-8c7d-9e0f1a2b3c4d',
      organization: 'default',
      data: {},
      correlationKey: null,
    });
    const id = inst.processInstanceId;

    // The next history write fails (a full disk, say); the ones after it go through.
    const putJson = history.putJson.bind(history);
    let failures = 0;
    history.putJson = (...args: Parameters<History['putJson']>) => {
      if (failures++ === 0) return Promise.reject(Object.assign(new Error('ENOSPC: injected'), { code: 'ENOSPC' }));
      return putJson(...args);
    };
    const archived = new Promise<void>((resolve) => engine.on('archived', (done: string) => done === id && resolve()));
    await engine.submitTask({
      organization: 'default',
      processInstanceId: id,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'ok' },
    });
    // The retry's timer does not hold a process open (a daemon's server does): this test's does.
    const keepAlive = setInterval(() => undefined, 60_000);
    await archived; // a second try, a second after the first
    clearInterval(keepAlive);
    t.equal(failures, 2, 'written on the second try');
    t.match(errors, [{ code: 'ENOSPC' }], 'the failure was reported');
    t.equal(store.state.instances[id], undefined, 'gone from the live state');
    t.match(
      await engine.getInstance({ organization: null }, id),
      { stateCd: STATE.COMPLETED },
      'read back from history',
    );
  },
);
