import { randomUUID } from 'node:crypto';
import t from 'tap';
import { apiHarness, type ApiHarness } from '../../../helpers/api.js';

const v1 = (pid: string) => `processId: ${pid}
name: Approval
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: userTask, next: done }
  done: { type: endEvent }
`;
const v2 = (pid: string) => `processId: ${pid}
name: Approval
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: userTask, next: extra }
  extra: { type: setVariable, variables: { extra: yes }, next: done }
  done: { type: endEvent }
`;
/** Version 3: the task is an inputNode, so nothing waiting at it moves there. */
const v3 = (pid: string) => `processId: ${pid}
name: Approval
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** A flow with versions 1 to 3 in organization default, and an execution of version 1 waiting at ask. */
async function waiting(h: ApiHarness): Promise<{ pid: string; id: string }> {
  const pid = randomUUID();
  for (const v of [v1, v2, v3]) await h.publish(v(pid));
  const inst = await h.engine.start({
    organization: 'default',
    processId: pid,
    versionNumber: '1',
    correlationKey: null,
    data: {},
  });
  return { pid, id: inst.processInstanceId };
}

const moveReq = (id: string, payload: object) =>
  ({ method: 'POST', url: `/process/instance/${id}/move`, payload }) as const;

t.test('POST /process/instance/{id}/move: a dry run, then the move, then the execution goes on', async (t) => {
  const h = await apiHarness(t);
  const developer = await h.key('developer', 'default');
  const { id } = await waiting(h);

  const dry = await h.call(developer, moveReq(id, { version: '2', dryRun: true }));
  t.equal(dry.statusCode, 200);
  t.same(dry.json(), { processInstanceId: id, fromVersion: '1', toVersion: '2', status: 'movable', children: [] });
  t.equal((await h.get(id)).processVersion, '1', 'a dry run changes nothing');

  const moved = await h.call(developer, moveReq(id, { version: '2' }));
  t.equal(moved.statusCode, 200);
  t.same(moved.json(), { processInstanceId: id, fromVersion: '1', toVersion: '2', status: 'moved', children: [] });
  const view = (await h.call(developer, { method: 'GET', url: `/process/instance/${id}` })).json();
  t.equal(view.processVersion, '2', 'the execution says its new version');

  const again = await h.call(developer, moveReq(id, { version: '2' }));
  t.same(again.json(), { processInstanceId: id, fromVersion: '2', toVersion: '2', status: 'unchanged', children: [] });

  const logs = await h.call(developer, { method: 'GET', url: `/process/instance/${id}/logs?follow=false` });
  t.match(logs.body, `moved from version 1 to version 2 by key:${developer.keyId}`, 'the log says who moved it');

  await h.engine.submitTask({ organization: 'default', processInstanceId: id, nodeId: 'ask', action: 'COMPLETE' });
  const done = await h.get(id);
  t.equal(done.variables.extra, 'yes', "version 2's node ran");
});

t.test('a move refused: each problem in details, the code stable, nothing changed', async (t) => {
  const h = await apiHarness(t);
  const developer = await h.key('developer', 'default');
  const { id } = await waiting(h);
  for (const dryRun of [true, false]) {
    const res = await h.call(developer, moveReq(id, { version: '3', dryRun }));
    t.equal(res.statusCode, 409);
    t.match(res.json(), {
      error: 'INSTANCE_NOT_MOVABLE',
      details: {
        fromVersion: '1',
        toVersion: '3',
        problems: [{ processInstanceId: id, nodeId: 'ask', code: 'NODE_TYPE_CHANGED', reason: String }],
      },
    });
  }
  t.equal((await h.get(id)).processVersion, '1');

  const cases: Array<[object, number, string]> = [
    [{ version: '9' }, 404, 'VERSION_NOT_FOUND'],
    [{ version: 'latest' }, 400, 'VALIDATION_ERROR'],
    [{}, 400, 'VALIDATION_ERROR'],
    [{ version: '2', force: true }, 400, 'VALIDATION_ERROR'],
  ];
  for (const [payload, status, code] of cases) {
    const res = await h.call(developer, moveReq(id, payload));
    t.equal(res.statusCode, status, JSON.stringify(payload));
    t.equal(res.json().error, code);
  }
  const unknown = await h.call(developer, moveReq(randomUUID(), { version: '2' }));
  t.equal(unknown.json().error, 'INSTANCE_NOT_FOUND');

  await h.engine.cancel({ organization: 'default', processInstanceId: id });
  const cancelled = await h.call(developer, moveReq(id, { version: '2' }));
  t.equal(cancelled.statusCode, 409);
  t.equal(cancelled.json().error, 'INSTANCE_NOT_RUNNING');
});

t.test('who may move: WORKFLOW_PUBLISH, in its own organization', async (t) => {
  const h = await apiHarness(t);
  const { id } = await waiting(h);
  const cases: Array<[Parameters<ApiHarness['key']>, number, string | null]> = [
    [['viewer', 'default'], 403, 'FORBIDDEN'],
    [['operator', 'default'], 403, 'FORBIDDEN'],
    [['admin', 'acme'], 404, 'INSTANCE_NOT_FOUND'],
    [['developer', 'default'], 200, null],
    [['admin', null], 200, null],
  ];
  for (const [who, status, code] of cases) {
    const res = await h.call(await h.key(...who), moveReq(id, { version: '2', dryRun: true }));
    t.equal(res.statusCode, status, who.join('@'));
    if (code) t.equal(res.json().error, code);
  }
  t.equal((await h.call(null, moveReq(id, { version: '2' }))).statusCode, 401);
});

t.test('a loop iteration moves only with its loop; the loop moves with it', async (t) => {
  const h = await apiHarness(t);
  const developer = await h.key('developer', 'default');
  const pid = randomUUID();
  const loop = (extra: string) => `processId: ${pid}
name: Loop
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{items}"
    next: done
    nodes:
      s: { type: startEvent, next: ask }
      ask: { type: userTask, next: ${extra ? 'note' : 'e'} }
${extra}      e: { type: endEvent }
  done: { type: endEvent }
`;
  await h.publish(loop(''));
  await h.publish(loop(`      note: { type: task, next: e }\n`));
  const root = await h.engine.start({
    organization: 'default',
    processId: pid,
    versionNumber: '1',
    correlationKey: null,
    data: { items: ['a'] },
  });
  const id = root.processInstanceId;
  const child = Object.values((await h.get(id)).nodes).find((n) => n.nodeId === 'each')!.children![0]!;
  const alone = await h.call(developer, moveReq(child, { version: '2' }));
  t.equal(alone.statusCode, 409);
  t.match(alone.json(), { error: 'INSTANCE_MOVES_WITH_PARENT', details: { parentInstanceId: id } });
  const moved = await h.call(developer, moveReq(id, { version: '2' }));
  t.same(moved.json(), { processInstanceId: id, fromVersion: '1', toVersion: '2', status: 'moved', children: [child] });
  t.equal((await h.get(child)).processVersion, '2');
});

t.test('the route is in /openapi.json with its body and answer', async (t) => {
  const h = await apiHarness(t);
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  const op = doc.paths['/process/instance/{id}/move']?.post;
  t.ok(op, 'documented');
  t.match(op.requestBody.content['application/json'].schema, { properties: { version: {}, dryRun: {} } });
  t.match(op.responses['200'].content['application/json'].schema, {
    properties: { status: { enum: ['moved', 'movable', 'unchanged'] } },
  });
});
