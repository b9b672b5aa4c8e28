import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { callDaemon, startDaemon, wfxIn } from '../helpers/cli.js';

const PID = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b';
/** Version 1: a userTask, then the end. */
const V1 = `processId: ${PID}
name: Approval
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: userTask, fields: [{ name: ok, type: boolean }], next: done }
  done: { type: endEvent }
`;
/** Version 2: a node after the task that version 1 lacks. */
const V2 = `processId: ${PID}
name: Approval
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: userTask, fields: [{ name: ok, type: boolean }], next: stamp }
  stamp: { type: setVariable, variables: { stamped: "by version 2" }, next: done }
  done: { type: endEvent }
`;
/** Version 3: the task became an inputNode: nothing waiting at it moves there. */
const V3 = `processId: ${PID}
name: Approval
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

t.test('executions waiting in version 1 move to version 2 on a real daemon, over HTTP and the CLI', async (t) => {
  const cwd = t.testdir();
  let { url } = await startDaemon(t, { cwd });
  const bootstrap = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const key = async (role: string, organization: string): Promise<string> => {
    const made = await callDaemon(url, bootstrap, 'POST', '/admin/api-keys', { name: role, role, organization });
    t.equal(made.status, 201);
    return made.body.apiKey as string;
  };
  const developer = await key('developer', 'acme');
  const operator = await key('operator', 'acme');
  const stranger = await key('admin', 'globex');
  const publish = async (source: string) =>
    (await callDaemon(url, developer, 'POST', '/admin/flows', { source })).body.version;

  t.equal(await publish(V1), '1');
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const started = await callDaemon(url, operator, 'POST', '/process/exec', { processId: PID });
    t.equal(started.status, 200);
    ids.push(started.body.processInstanceId as string);
  }
  const [a, b, c] = ids as [string, string, string];
  t.equal(await publish(V2), '2');
  t.equal(await publish(V3), '3');
  const move = (apiKey: string, id: string, body: object) =>
    callDaemon(url, apiKey, 'POST', `/process/instance/${id}/move`, body);

  // Over HTTP: the dry run, the refusals, the move.
  t.same((await move(developer, a, { version: '2', dryRun: true })).body, {
    processInstanceId: a,
    fromVersion: '1',
    toVersion: '2',
    status: 'movable',
    children: [],
  });
  const denied = await move(operator, a, { version: '2' });
  t.equal(denied.status, 403, 'an operator may not move');
  t.equal(denied.body.error, 'FORBIDDEN');
  const hidden = await move(stranger, a, { version: '2' });
  t.equal(hidden.status, 404, "another organization's execution is not found");
  t.equal(hidden.body.error, 'INSTANCE_NOT_FOUND');
  const incompatible = await move(developer, a, { version: '3' });
  t.equal(incompatible.status, 409);
  t.match(incompatible.body, {
    error: 'INSTANCE_NOT_MOVABLE',
    details: { problems: [{ processInstanceId: a, nodeId: 'ask', code: 'NODE_TYPE_CHANGED' }] },
  });
  t.match((await move(developer, a, { version: '2' })).body, { status: 'moved', fromVersion: '1' });

  // The CLI, as the developer.
  const wfx = (...args: string[]) => wfxIn([...args, '--api-key', developer], { cwd });
  const dry = await wfx('instances', 'move', b, '--to', '2', '--dry-run');
  t.equal(dry.code, 0, dry.stderr);
  t.equal(dry.stdout, `${b} can move from version 1 to version 2 (dry run: nothing changed)\n`);
  const refused = await wfx('instances', 'move', b, '--to', '3');
  t.equal(refused.code, 1, 'a refused move exits 1');
  t.equal(refused.stdout, '');
  t.match(refused.stderr, /^INSTANCE_NOT_MOVABLE: execution \S+ cannot move to version 3/);
  t.match(refused.stderr, /^NODE\s+PROBLEM\s+WHY\nask\s+NODE_TYPE_CHANGED\s+ask is of type userTask here/m);
  t.match(refused.stderr, /^hint: /m);
  const refusedJson = await wfx('instances', 'move', b, '--to', '3', '--json');
  t.equal(refusedJson.code, 1);
  t.match(JSON.parse(refusedJson.stdout), {
    error: 'INSTANCE_NOT_MOVABLE',
    problems: [{ nodeId: 'ask', code: 'NODE_TYPE_CHANGED' }],
  });
  const moved = await wfx('instances', 'move', b, '--to', '2');
  t.equal(moved.code, 0, moved.stderr);
  t.equal(moved.stdout, `${b} moved from version 1 to version 2\n`);
  const same = await wfx('instances', 'move', b, '--to', '2', '--json');
  t.match(JSON.parse(same.stdout), { status: 'unchanged' });
  const missing = await wfx('instances', 'move', b, '--to', '9');
  t.equal(missing.code, 1);
  t.match(missing.stderr, /^VERSION_NOT_FOUND: /);

  // The moved ones go on in version 2; the one left goes on in version 1.
  for (const id of [a, b, c]) {
    const answered = await callDaemon(url, operator, 'POST', '/process/task', {
      processInstanceId: id,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { ok: true },
    });
    t.equal(answered.status, 200);
  }
  for (const [id, version, stamped] of [
    [a, '2', 'by version 2'],
    [b, '2', 'by version 2'],
    [c, '1', undefined],
  ] as const) {
    const view = (await callDaemon(url, operator, 'GET', `/process/instance/${id}`)).body as {
      processVersion: string;
      state: string;
      data: Record<string, unknown>;
      nodes: Array<{ nodeId: string }>;
    };
    t.match(view, { processVersion: version, state: 'COMPLETED' });
    t.equal(view.data.stamped, stamped);
    t.equal(
      view.nodes.some((n) => n.nodeId === 'stamp'),
      version === '2',
    );
  }
  const notRunning = await wfx('instances', 'move', c, '--to', '2');
  t.equal(notRunning.code, 1);
  t.match(notRunning.stderr, /^INSTANCE_NOT_RUNNING: /);

  // In history, after a restart, they are executions of the version they ended in.
  t.equal((await wfxIn(['daemon', 'stop'], { cwd })).code, 0);
  ({ url } = await startDaemon(t, { cwd }));
  const listed = async (version: string) =>
    (
      (await callDaemon(url, operator, 'GET', `/process/instances?processId=${PID}&version=${version}`)).body
        .items as Array<{ processInstanceId: string }>
    )
      .map((i) => i.processInstanceId)
      .sort();
  t.same(await listed('2'), [a, b].sort());
  t.same(await listed('1'), [c]);
});
