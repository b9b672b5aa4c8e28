// What a step decides of an input node's or user task's answer: the data it takes or refuses
// for each input type, a form's fields, CANCEL. Answers racing each other through the engine,
// timeouts across a restart, archiving and the file store are in ../input.test.ts.
import t from 'tap';
import { STATE, STATUS } from '../../../../src/daemon/state/state.js';
import { FlowStep, trail } from '../../../helpers/step-flows.js';
import { inputFlow } from '../../../helpers/flow-yaml.js';

const CASES: Array<{ props: string; good: unknown[]; bad: unknown[] }> = [
  { props: 'inputType: textbox', good: ['text', ''], bad: [1, null, ['a']] },
  { props: 'inputType: textarea', good: ['line 1\nline 2'], bad: [true] },
  { props: 'inputType: number', good: [0, -2.5], bad: ['3', null] },
  {
    props: 'inputType: date',
    good: ['2026-11-21', '2026-11-21T10:00:00Z'],
    bad: ['21/11/2026', '2026-13-45', 20261121],
  },
  {
    props: 'inputType: select\noptions: [red, green, { value: blue, label: Blue }]',
    good: ['red', 'blue'],
    bad: ['purple', ['red']],
  },
  { props: 'inputType: radio\noptions: [a, b]', good: ['a'], bad: ['c'] },
  { props: 'inputType: checkbox\noptions: [a, b, c]', good: [['a', 'c'], []], bad: ['a', ['a', 'x']] },
  // A file input's good answers are in the test of the file store below (they need a stored file).
  {
    props: 'inputType: file',
    good: [],
    bad: ['', 7, {}, 'files/report.pdf', { id: 'f1' }, 'file_00000000000000000000000000000000'],
  },
];

t.test(
  'an input node waits with its resolved form title, and COMPLETE moves on with the data as variables',
  async (t) => {
    const m = new FlowStep();
    const pid = await m.publish(inputFlow('inputType: textbox'));
    const inst = m.started(pid, { order: { id: 42 } });
    t.equal(inst.stateCd, STATE.RUNNING);
    const ask = Object.values(inst.nodes).find((n) => n.nodeId === 'ask')!;
    t.equal(ask.statusCd, STATUS.WAITING);
    t.match(ask.wait, { kind: 'input', inputType: 'textbox', formTitle: 'Approve order 42?' });
    t.ok(m.events.some((e) => e.type === 'NODE_WAITING' && e.nodeId === 'ask'));
    m.answer(inst.processInstanceId, 'ask', { inputValue: 'yes', note: 'ok' });
    const done = m.instance(inst.processInstanceId);
    t.equal(done.stateCd, STATE.COMPLETED);
    t.match(done.variables, { inputValue: 'yes', note: 'ok', inputNodeAction: 'COMPLETE' });
    t.throws(
      () => m.answer(inst.processInstanceId, 'ask', { inputValue: 'x' }),
      { code: 'INSTANCE_NOT_RUNNING' },
      'a finished execution is not running',
    );
  },
);

t.test(
  'task data of every input type is accepted or refused (422 VALIDATION_ERROR, the node keeps waiting)',
  async (t) => {
    const m = new FlowStep();
    for (const c of CASES) {
      const pid = await m.publish(inputFlow(c.props));
      for (const value of c.bad) {
        const inst = m.started(pid, { order: { id: 1 } });
        t.throws(
          () => m.answer(inst.processInstanceId, 'ask', { inputValue: value }),
          { code: 'VALIDATION_ERROR', status: 422 },
          `${c.props.split('\n')[0]} refuses ${JSON.stringify(value)}`,
        );
        t.equal(m.instance(inst.processInstanceId).stateCd, STATE.RUNNING, 'still waiting');
      }
      for (const value of c.good) {
        const inst = m.started(pid, { order: { id: 1 } });
        m.answer(inst.processInstanceId, 'ask', { inputValue: value });
        const done = m.instance(inst.processInstanceId);
        t.equal(done.stateCd, STATE.COMPLETED, `${c.props.split('\n')[0]} accepts ${JSON.stringify(value)}`);
        t.same(done.variables.inputValue, value);
      }
    }
  },
);

t.test('a form: fields validated, formData and each field become variables', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(
    inputFlow(`inputType: form
fields:
  - { name: approve, type: boolean, required: true }
  - { name: amount, type: number }
  - { name: when, type: date }
  - { name: size, type: select, options: [S, M, L] }
  - { name: tags, type: array }
  - { name: comment, type: text }`),
  );
  const submit = (data: Record<string, unknown>) => {
    const inst = m.started(pid, { order: { id: 1 } });
    m.answer(inst.processInstanceId, 'ask', data);
    return m.instance(inst.processInstanceId);
  };
  const done = submit({ approve: true, amount: 3, when: '2026-12-01', size: 'M', tags: ['x'], comment: 'fine' });
  t.same(done.variables.formData, {
    approve: true,
    amount: 3,
    when: '2026-12-01',
    size: 'M',
    tags: ['x'],
    comment: 'fine',
  });
  t.equal(done.variables.approve, true, 'each key is a variable too');
  for (const bad of [
    {},
    { approve: 'yes' },
    { approve: true, amount: 'x' },
    { approve: true, size: 'XL' },
    { approve: true, tags: 'x' },
  ]) {
    t.throws(() => submit(bad), { code: 'VALIDATION_ERROR' }, `refuses ${JSON.stringify(bad)}`);
  }
});

t.test('a user task is a form with an assignee', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`
processId: AUTO
name: Review
nodes:
  start: { type: startEvent, next: review }
  review:
    type: userTask
    name: Review the order
    assignee: "{reviewer}"
    fields: [{ name: ok, type: boolean, required: true }]
    next: done
  done: { type: endEvent }
`);
  const inst = m.started(pid, { reviewer: 'ana@example.com' });
  t.match(Object.values(inst.nodes).at(-1)!.wait, {
    kind: 'input',
    inputType: 'form',
    assignee: 'ana@example.com',
    formTitle: 'Review the order',
  });
  m.answer(inst.processInstanceId, 'review', { ok: true });
  t.same(m.instance(inst.processInstanceId).variables.formData, { ok: true });
});

t.test('CANCEL takes errorFlow when there is one, else cancels the execution', async (t) => {
  const m = new FlowStep();
  const withFlow = await m.publish(
    inputFlow('inputType: textbox\nerrorFlow: cancelled', '  cancelled: { type: endEvent }'),
  );
  const a = m.started(withFlow, { order: { id: 1 } });
  m.answer(a.processInstanceId, 'ask', {}, 'CANCEL');
  const aDone = m.instance(a.processInstanceId);
  t.equal(aDone.stateCd, STATE.COMPLETED, 'the errorFlow path completes the execution');
  t.same(trail(aDone), ['start:2', `ask:${STATUS.CANCELLED}`, 'cancelled:2']);
  t.equal(aDone.variables.inputNodeAction, 'CANCEL');
  t.ok(m.events.some((e) => e.type === 'NODE_CANCELLED' && e.processInstanceId === a.processInstanceId));

  const without = await m.publish(inputFlow('inputType: textbox'));
  const b = m.started(without, { order: { id: 1 } });
  m.answer(b.processInstanceId, 'ask', {}, 'CANCEL');
  const bDone = m.instance(b.processInstanceId);
  t.equal(bDone.stateCd, STATE.CANCELLED);
  t.ok(m.events.some((e) => e.type === 'PROCESS_CANCELLED' && e.processInstanceId === b.processInstanceId));
});

t.test(
  'a form takes keys that are no field of it: each becomes a variable; the fields are still checked',
  async (t) => {
    const m = new FlowStep();
    const pid = await m.publish(
      inputFlow(`inputType: form
fields:
  - { name: approve, type: boolean, required: true }`),
    );
    const inst = m.started(pid, { order: { id: 1 } });
    t.throws(() => m.answer(inst.processInstanceId, 'ask', { approve: 'yes', note: 'x' }), {
      code: 'VALIDATION_ERROR',
      status: 422,
      message: /approve: must be true or false/,
    });
    m.answer(inst.processInstanceId, 'ask', { approve: true, note: 'ship it', ticket: 42 });
    const done = m.instance(inst.processInstanceId);
    t.equal(done.stateCd, STATE.COMPLETED);
    t.match(done.variables, {
      approve: true,
      note: 'ship it',
      ticket: 42,
      formData: { approve: true, note: 'ship it', ticket: 42 },
    });
  },
);
