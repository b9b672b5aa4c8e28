import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startDaemon, wfxIn } from '../helpers/cli.js';
import { readSse } from '../helpers/sse.js';
import type { NodeView } from '../../src/shared/api/index.js';

const FLOW = `processId: 6b2e4c1a-8d3f-4a5b-9c7e-1f2a3b4c5d6e
name: Loop, child and deadline
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{items}"
    collect: answer
    nodes:
      s: { type: startEvent, next: ask }
      ask: { type: inputNode, inputType: textbox, next: keep }
      keep: { type: setVariable, variables: { answer: "{inputValue}" }, next: e }
      e: { type: endEvent }
    next: sub
  sub:
    type: subProcess
    nodes:
      s: { type: startEvent, next: wait }
      wait: { type: inputNode, inputType: textbox, next: e }
      e: { type: endEvent }
    next: done
  deadline: { type: boundaryEvent, attachedTo: sub, event: timer, duration: 3s, next: late }
  late: { type: endEvent }
  done: { type: endEvent }
`;

/** A daemon process on `dataDir`; kill() is kill -9. */
async function daemon(t: Test, dataDir: string) {
  const info = await startDaemon(t, { dataDir });
  const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
  const call = async (method: string, path: string, body?: object) => {
    const r = await fetch(`${info.url}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body && { 'content-type': 'application/json' }) },
      body: body && JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  return { info, key, call, kill: () => process.kill(info.pid, 'SIGKILL') };
}

t.test(
  'kill -9 in the middle of a loop, and while a child runs under an armed boundary timer: all of it resumes',
  async (t) => {
    const dataDir = join(t.testdir(), 'data');
    let d = await daemon(t, dataDir);
    const published = await d.call('POST', '/admin/flows', { source: FLOW, organization: 'default' });
    t.match(published.body, { version: '1', created: true }, 'published');
    const started = await d.call('POST', '/process/start', {
      processId: '6b2e4c1a-8d3f-4a5b-9c7e-1f2a3b4c5d6e',
      data: { items: ['x', 'y'] },
    });
    const id = started.body.processInstanceId as string;

    /** The one running child of node `nodeId` of the execution. */
    const childOf = async (nodeId: string) => {
      const inst = (await d.call('GET', `/process/instance/${id}`)).body;
      const node = (inst.nodes as NodeView[]).find((n) => n.nodeId === nodeId && n.statusCd === 1);
      return node!.childInstanceIds!.at(-1)!;
    };
    const answer = async (nodeId: string, value: string) => {
      const child = await childOf(nodeId);
      const r = await d.call('POST', '/process/task', {
        processInstanceId: child,
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue: value },
      });
      t.equal(r.status, 200, `answered ${value}`);
    };

    await answer('each', 'first');
    d.kill(); // in the middle of the loop: iteration 1 waits
    d = await daemon(t, dataDir);
    await answer('each', 'second');
    const afterLoop = (await d.call('GET', `/process/instance/${id}`)).body;
    t.same(
      (afterLoop.data as Record<string, unknown>).answer,
      ['first', 'second'],
      'the loop finished with both answers, across the kill',
    );
    const child = await childOf('sub');
    d.kill(); // the subprocess child waits, and its 3s deadline is armed
    d = await daemon(t, dataDir);

    // The deadline fires (at once if it passed while the daemon was down): follow the log to its end.
    const logs = await fetch(`${d.info.url}/process/instance/${id}/logs`, { headers: { 'x-api-key': d.key } });
    for await (const event of readSse(logs)) if (event.event === 'end') break;
    const final = (await d.call('GET', `/process/instance/${id}`)).body;
    t.equal(final.stateCd, 1, 'completed');
    t.same(
      (final.nodes as NodeView[]).map((n) => `${n.nodeId}:${n.statusCd}`),
      ['start:2', 'each:2', 'sub:4', 'deadline:2', 'late:2'],
      'the boundary cancelled the subprocess node and took its path',
    );
    t.equal((await d.call('GET', `/process/instance/${child}`)).body.stateCd, 3, 'the child under it was cancelled');
    await wfxIn(['daemon', 'stop', '--data-dir', dataDir]);
  },
);
