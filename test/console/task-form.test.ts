import t from 'tap';
import type { WaitingTask } from '../../src/shared/api/tasks.js';
import type { InputSpec } from '../../src/shared/input-data.js';
import {
  answerData,
  controlsOf,
  dueWords,
  initialValues,
  problemsByField,
  refusalByField,
} from '../../src/console/model/task-form.js';
import {
  eventTouchesTasks,
  filterTasks,
  taskFiltersFromQuery,
  taskFiltersToQuery,
  taskHref,
} from '../../src/console/model/task-list.js';

const FORM: InputSpec = {
  inputType: 'form',
  options: null,
  fields: [
    { name: 'approve', type: 'boolean', required: true },
    { name: 'size', type: 'select', options: ['S', { value: 'M', label: 'Medium' }] },
    { name: 'count', type: 'number' },
    { name: 'tags', type: 'array' },
    { name: 'note', type: 'text', label: 'A note' },
  ],
};

t.test('a form: one control per field, its values make the fields object the daemon takes', async (t) => {
  const controls = controlsOf(FORM);
  t.same(
    controls.map((c) => [c.key, c.kind, c.label, c.required]),
    [
      ['approve', 'boolean', 'approve', true],
      ['size', 'select', 'size', false],
      ['count', 'number', 'count', false],
      ['tags', 'lines', 'tags', false],
      ['note', 'text', 'A note', false],
    ],
  );
  t.same(controls[1]!.options, [
    { label: 'S', value: 'S' },
    { label: 'Medium', value: 'M' },
  ]);
  const empty = answerData(FORM, controls, initialValues(controls));
  t.same(empty, {}, 'nothing given, nothing sent');
  t.same(problemsByField(FORM, empty), { approve: 'required' }, "the daemon's check, by field");
  const data = answerData(FORM, controls, {
    ...initialValues(controls),
    approve: 'no',
    size: '1',
    count: ' 3.5 ',
    tags: 'a\n\n b \n',
    note: 'ok',
  });
  t.same(data, { approve: false, size: 'M', count: 3.5, tags: ['a', 'b'], note: 'ok' });
  t.same(problemsByField(FORM, data), {});
  t.same(
    problemsByField(FORM, answerData(FORM, controls, { ...initialValues(controls), approve: 'yes', count: '3x' })),
    { count: 'must be a number' },
    'text that is no number is sent as typed, and refused',
  );
});

t.test("a form starts with its fields' defaults", async (t) => {
  const spec: InputSpec = {
    inputType: 'form',
    options: null,
    fields: [
      { name: 'approve', type: 'boolean', default: true },
      { name: 'size', type: 'select', options: ['S', 'M'], default: 'M' },
      { name: 'count', type: 'number', default: 2 },
      { name: 'tags', type: 'array', default: ['a', 'b'] },
      { name: 'note', type: 'text', default: 'hi' },
      { name: 'odd', type: 'select', options: ['S'], default: 'X' },
    ],
  };
  const controls = controlsOf(spec);
  const values = initialValues(controls);
  t.same(
    values,
    { approve: 'yes', size: '1', count: '2', tags: 'a\nb', note: 'hi', odd: '' },
    'one that fits no option: none',
  );
  t.same(answerData(spec, controls, values), { approve: true, size: 'M', count: 2, tags: ['a', 'b'], note: 'hi' });
});

t.test('simple inputs answer {inputValue}', async (t) => {
  const spec = (inputType: InputSpec['inputType'], options: unknown[] | null = null): InputSpec => ({
    inputType,
    options,
    fields: null,
  });
  const answer = (s: InputSpec, v: unknown) => {
    const controls = controlsOf(s);
    t.equal(controls.length, 1);
    return answerData(s, controls, { inputValue: v as string });
  };
  t.same(answer(spec('textbox'), ''), { inputValue: '' }, 'an empty text is a text');
  t.same(answer(spec('textarea'), 'a\nb'), { inputValue: 'a\nb' });
  t.same(answer(spec('number'), '42'), { inputValue: 42 });
  t.same(answer(spec('date'), ''), {}, 'no date is no answer');
  t.same(answer(spec('date'), '2026-11-21'), { inputValue: '2026-11-21' });
  t.same(answer(spec('select', [1, 2]), '1'), { inputValue: 2 }, 'the option value, with its type');
  t.same(answer(spec('radio', ['a', 'b']), '0'), { inputValue: 'a' });
  t.same(answer(spec('checkbox', ['a', 'b', 'c']), [0, 2]), { inputValue: ['a', 'c'] });
  t.same(answer(spec('file'), { fileId: 'file_' + '0'.repeat(32), name: 'x', bytes: 1 }), {
    inputValue: 'file_' + '0'.repeat(32),
  });
  t.same(problemsByField(spec('file'), answer(spec('file'), null)), { inputValue: 'required' });
});

t.test("the daemon's refusal by field: details.fields, else its problems parsed", async (t) => {
  t.same(refusalByField({ fields: { a: 'required', b: 5 }, problems: ['x: y'] }), { a: 'required' });
  t.same(refusalByField({ problems: ['approve: must be true or false', 'odd'] }), {
    approve: 'must be true or false',
  });
  t.same(refusalByField(undefined), {});
});

t.test('due words count down, then say how late', async (t) => {
  const f = (ms: number) => `${ms}ms`;
  t.equal(dueWords('2026-01-01T00:00:10.000Z', Date.parse('2026-01-01T00:00:00.000Z'), f), 'in 10000ms');
  t.equal(dueWords('2026-01-01T00:00:00.000Z', Date.parse('2026-01-01T00:00:02.000Z'), f), '2000ms overdue');
});

const task = (over: Partial<WaitingTask>): WaitingTask =>
  ({
    processInstanceId: 'p1',
    processId: 'f',
    processName: 'Order approval',
    processVersion: '1',
    organization: 'acme',
    correlationKey: 'order-42',
    nodeInstanceId: 'n2',
    nodeId: 'ask',
    nodeName: 'Ask',
    nodeType: 'inputNode',
    inputType: 'form',
    formTitle: 'Approve order 42?',
    options: null,
    fields: [],
    assignee: null,
    claim: null,
    dueAt: null,
    waitingSince: '2026-01-01T00:00:00.000Z',
    ...over,
  }) as WaitingTask;

t.test('the inbox filters by words and age, and keeps its filters in the URL', async (t) => {
  const a = task({});
  const b = task({
    processInstanceId: 'p2',
    formTitle: 'Review the contract',
    waitingSince: '2026-01-01T01:00:00.000Z',
  });
  const now = Date.parse('2026-01-01T01:30:00.000Z');
  const f = taskFiltersFromQuery(new URLSearchParams('q=ORDER%2042&age=1h&processId=f'));
  t.same(f, { processId: 'f', q: 'ORDER 42', age: '1h' });
  t.same(taskFiltersFromQuery(new URLSearchParams(taskFiltersToQuery(f).slice(1))), f, 'round trip');
  t.same(filterTasks([a, b], f, now), [a], 'words in any case, older than an hour');
  t.same(filterTasks([a, b], { processId: '', q: '', age: '' }, now), [a, b]);
  t.same(filterTasks([a, b], { processId: '', q: 'contract', age: '' }, now), [b]);
  t.equal(taskFiltersFromQuery(new URLSearchParams('age=3y')).age, '', 'an unknown age is none');
  t.equal(taskHref({ processInstanceId: 'a/b', nodeId: 'ask' }), '/tasks/a%2Fb/ask');
});

t.test('events that change the inbox', async (t) => {
  const listed = new Set(['p1']);
  t.ok(eventTouchesTasks({ type: 'NODE_WAITING', processInstanceId: 'p9', nodeType: 'userTask' }, listed));
  t.notOk(
    eventTouchesTasks({ type: 'NODE_WAITING', processInstanceId: 'p9', nodeType: 'intermediateCatchEvent' }, listed),
  );
  t.ok(eventTouchesTasks({ type: 'NODE_COMPLETED', processInstanceId: 'p1' }, listed));
  t.ok(eventTouchesTasks({ type: 'PROCESS_CANCELLED', processInstanceId: 'p1' }, listed));
  t.notOk(eventTouchesTasks({ type: 'NODE_COMPLETED', processInstanceId: 'p2' }, listed));
  // While a read is under way, its answer may list any execution.
  t.ok(eventTouchesTasks({ type: 'PROCESS_CANCELLED', processInstanceId: 'p2' }, null));
  t.notOk(eventTouchesTasks({ type: 'NODE_STARTED', processInstanceId: 'p2' }, null));
});
