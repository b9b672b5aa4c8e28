import t from 'tap';
import { STATE, type Execution } from '../../../../src/daemon/state/state.js';
import { FlowStep, trail } from '../../../helpers/step-flows.js';

/** A called flow with inputs: it waits for a person, so that its executions can be looked at. */
const TARGET = `processId: AUTO
name: Pack order
inputs:
  type: object
  required: [orderId]
  additionalProperties: false
  properties:
    orderId: { type: string }
    express: { type: boolean, default: false }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** A parent flow whose node `call` is `node` (the rest of its properties), then `done`. */
const parent = (node: string, extra = '') => `processId: AUTO
name: Parent
nodes:
  start: { type: startEvent, next: call }
  call: { ${node}, next: done }
${extra}  done: { type: endEvent }
`;

async function withTarget(): Promise<{ m: FlowStep; target: string }> {
  const m = new FlowStep();
  return { m, target: await m.publish(TARGET) };
}

const callNode = (inst: Execution) => Object.values(inst.nodes).find((n) => n.nodeId === 'call')!;

t.test('a subProcess whose input does not match the called flow fails its node with INPUT_INVALID', async (t) => {
  const { m, target } = await withTarget();
  const pid = await m.publish(parent(`type: subProcess, processId: ${target}, input: { orderId: "{n}" }`));
  const failed = m.started(pid, { n: 42 });
  t.equal(failed.stateCd, STATE.FAILED);
  t.match(failed.error, {
    code: 'INPUT_INVALID',
    nodeId: 'call',
    message: /^data\.orderId must be string \(the inputs of flow Pack order, version 1\)$/,
  });
  t.equal(callNode(failed).children, undefined, 'no child was started');
  t.same(
    m.events.filter((e) => e.type === 'PROCESS_STARTED').map((e) => e.processInstanceId),
    [failed.processInstanceId],
    'the parent is the only execution that started',
  );

  const ok = m.started(pid, { n: 'A1' });
  const childId = callNode(ok).children![0]!;
  t.same(m.instance(childId).variables, { orderId: 'A1', express: false }, 'a match starts, defaults filled in');
});

t.test('a subProcess without input hands all variables on, and they must match too', async (t) => {
  const { m, target } = await withTarget();
  const pid = await m.publish(parent(`type: subProcess, processId: ${target}`));
  t.match(m.started(pid, { orderId: 'A1', note: 'x' }).error, {
    code: 'INPUT_INVALID',
    message: /^data\.note is not an input of the flow/,
  });
  t.equal(m.started(pid, { orderId: 'A1' }).stateCd, STATE.RUNNING, 'exactly the inputs: it starts');
});

t.test('INPUT_INVALID is caught like any failure: errorFlow, or an error boundary by code', async (t) => {
  const { m, target } = await withTarget();
  const viaErrorFlow = await m.publish(
    parent(`type: subProcess, processId: ${target}, input: {}, errorFlow: oops`, '  oops: { type: endEvent }\n'),
  );
  const e = m.started(viaErrorFlow);
  t.equal(e.stateCd, STATE.COMPLETED, 'errorFlow took it');
  t.same(trail(e), ['start:2', 'call:3', 'oops:2']);
  t.match(e.variables.error, { code: 'INPUT_INVALID', message: /data\.orderId is required/ });

  const viaBoundary = await m.publish(
    parent(
      `type: subProcess, processId: ${target}, input: {}`,
      '  caught: { type: boundaryEvent, attachedTo: call, event: error, errorCode: INPUT_INVALID, next: handled }\n  handled: { type: endEvent }\n',
    ),
  );
  const b = m.started(viaBoundary);
  t.equal(b.stateCd, STATE.COMPLETED, 'the boundary took it');
  t.same(trail(b), ['start:2', 'call:3', 'caught:2', 'handled:2']);
  t.equal((b.variables.error as { code: string }).code, 'INPUT_INVALID');
});

t.test(
  'a callProcess whose data does not match fails with INPUT_INVALID; one that matches gets defaults',
  async (t) => {
    const { m, target } = await withTarget();
    const pid = await m.publish(parent(`type: callProcess, processId: ${target}, data: { orderId: "{orderId}" }`));
    const failed = m.started(pid, { orderId: 7 });
    t.equal(failed.stateCd, STATE.FAILED);
    t.match(failed.error, { code: 'INPUT_INVALID', nodeId: 'call', message: /^data\.orderId must be string/ });
    t.equal(failed.variables.calledProcessInstanceId, undefined, 'nothing was called');

    const ok = m.started(pid, { orderId: 'A7' });
    t.equal(ok.stateCd, STATE.COMPLETED);
    const called = m.instance(ok.variables.calledProcessInstanceId as string);
    t.same(called.variables, { orderId: 'A7', express: false });
  },
);

t.test("a flow's inputs check its start only: its own loop iterations and embedded bodies are not", async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`processId: AUTO
name: Lines
inputs:
  type: object
  required: [lines]
  additionalProperties: false
  properties: { lines: { type: array } }
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{lines}"
    collect: doubled
    nodes:
      s: { type: startEvent, next: calc }
      calc: { type: setVariable, variables: { doubled: "{item}{item}" }, next: e }
      e: { type: endEvent }
    next: sub
  sub:
    type: subProcess
    input: { other: 1 }
    nodes:
      s: { type: startEvent, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`);
  const inst = m.started(pid, { lines: [1, 2] });
  t.equal(inst.stateCd, STATE.COMPLETED, JSON.stringify(inst.error));
  t.same(inst.variables.doubled, ['11', '22']);
});

t.test('a start refuses data that does not match with VALIDATION_ERROR and starts nothing', async (t) => {
  const { m, target } = await withTarget();
  t.throws(() => m.start(target, { orderId: 1 }), {
    code: 'VALIDATION_ERROR',
    details: { path: 'data.orderId', processId: target, version: '1' },
  });
  t.same(m.events, [], 'no execution started');
  t.same(Object.keys(m.state.instances), [], 'nothing written');
});
