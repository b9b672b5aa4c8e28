import t from 'tap';
import { WfxError } from '../../src/shared/errors.js';
import { frameMatching, KEY, widerThan } from '../helpers/ink.js';
import { openTask, task } from '../helpers/tui.js';

/* Every input type answered through the tasks screen: keys sent, frames asserted, and the data
   the screen submits (a fake submit records it). */

const ID = '01a1fe30-edc6-7617-bd1f-84feb7474dfd';
const complete = (data: Record<string, unknown>) => [
  { processInstanceId: ID, nodeId: 'ask', action: 'COMPLETE', data },
];
const press = (ui: { stdin: { write(s: string): void } }, ...keys: string[]) => {
  for (const k of keys) ui.stdin.write(k);
};

t.test('textbox: one line, backspace deletes, enter completes with {inputValue}', async (t) => {
  const { ui, sent } = await openTask(task({ inputType: 'textbox', formTitle: 'Ship order 42 (39 EUR)?' }));
  t.teardown(ui.unmount);
  t.match(
    ui.lastFrame(),
    /Ship order 42 \(39 EUR\)\?\n\n› answer \[▌\]/,
    'the resolved title, then the field with the cursor',
  );
  t.match(ui.lastFrame(), /enter\s+complete\s+ctrl\+x\s+cancel\s+esc\s+back/);
  press(ui, 'Ship it?');
  await frameMatching(ui.lastFrame, /\[Ship it\?▌\]/);
  press(ui, KEY.backspace, '!');
  await frameMatching(ui.lastFrame, /\[Ship it!▌\]/);
  t.same(sent, []);
  press(ui, KEY.enter);
  await frameMatching(ui.lastFrame, /completed Approve of Order approval/);
  t.same(sent, complete({ inputValue: 'Ship it!' }));
});

t.test('textarea: enter adds a line, ctrl+s completes with the lines joined by \\n', async (t) => {
  const { ui, sent } = await openTask(task({ inputType: 'textarea', formTitle: 'Why?' }));
  t.teardown(ui.unmount);
  t.match(ui.lastFrame(), /enter\s+new line\s+ctrl\+s\s+complete/, 'the key bar says which key submits');
  press(ui, 'first line', KEY.enter, 'second');
  const frame = await frameMatching(ui.lastFrame, /second▌/);
  t.match(frame, /answer\s+2 lines/);
  t.match(frame, /│ first line\s+│\n│ second▌/);
  t.same(sent, [], 'enter did not send');
  press(ui, KEY.ctrlS);
  await frameMatching(ui.lastFrame, /completed/);
  t.same(sent, complete({ inputValue: 'first line\nsecond' }));
});

t.test(
  "number: text that is not a number is refused in place with the API's words, nothing sent; a number is sent as a number",
  async (t) => {
    const { ui, sent } = await openTask(task({ inputType: 'number', formTitle: 'How many?' }));
    t.teardown(ui.unmount);
    t.match(ui.lastFrame(), /number \* \[▌\]\s+a number/);
    press(ui, KEY.enter);
    await frameMatching(ui.lastFrame, /✖ required/);
    press(ui, '4x');
    await frameMatching(ui.lastFrame, /\[4x▌\]/);
    t.notMatch(ui.lastFrame(), /✖/, 'an edit clears the problems');
    press(ui, KEY.enter);
    await frameMatching(ui.lastFrame, /\[4x▌\]\s+a number\n\s+✖ must be a number/);
    t.same(sent, [], 'refused before sending');
    press(ui, KEY.backspace, '2.5');
    await frameMatching(ui.lastFrame, /\[42\.5▌\]/);
    press(ui, KEY.ctrlS);
    await frameMatching(ui.lastFrame, /completed/);
    t.same(sent, complete({ inputValue: 42.5 }));
  },
);

t.test('date: ISO only, checked as the API checks it', async (t) => {
  const { ui, sent } = await openTask(task({ inputType: 'date', formTitle: 'Deliver when?' }));
  t.teardown(ui.unmount);
  t.match(ui.lastFrame(), /date \* \[▌\]\s+YYYY-MM-DD or an ISO date-time/);
  press(ui, '2026-02-30x', KEY.enter);
  await frameMatching(ui.lastFrame, /✖ must be an ISO 8601 date \(YYYY-MM-DD\) or date-time/);
  t.same(sent, []);
  press(ui, KEY.backspace, KEY.backspace, KEY.backspace, '12');
  await frameMatching(ui.lastFrame, /\[2026-02-12▌\]/);
  press(ui, KEY.enter);
  await frameMatching(ui.lastFrame, /completed/);
  t.same(sent, complete({ inputValue: '2026-02-12' }));
});

t.test('select: ↑↓ move, space chooses one; ctrl+s before choosing is refused', async (t) => {
  const options = [{ value: 'S', label: 'small' }, { value: 'M', label: 'medium' }, 'L'];
  const { ui, sent } = await openTask(task({ inputType: 'select', options, formTitle: 'Which size?' }));
  t.teardown(ui.unmount);
  const first = ui.lastFrame()!;
  t.match(
    first,
    /› choose one \*\n\s+›\( \) small\n\s+ \( \) medium\n\s+ \( \) L/,
    'one option a line, labels shown, the cursor on the first',
  );
  t.match(first, /↑↓\s+option\s+space\s+choose\s+ctrl\+s\s+complete/, 'one option a line: ↑↓ says the key bar');
  press(ui, KEY.ctrlS);
  await frameMatching(ui.lastFrame, /choose one \*\n\s+✖ required/);
  press(ui, KEY.down, ' ');
  await frameMatching(ui.lastFrame, /›\(•\) medium/);
  press(ui, KEY.down, KEY.up, KEY.up);
  await frameMatching(ui.lastFrame, /›\( \) small/);
  t.match(ui.lastFrame(), / \(•\) medium/, 'moving does not change the choice');
  press(ui, KEY.ctrlS);
  await frameMatching(ui.lastFrame, /completed/);
  t.same(sent, complete({ inputValue: 'M' }), 'the value is sent, not the label');
});

t.test('radio: j k move, enter chooses (a new choice replaces the old), ctrl+s completes', async (t) => {
  const { ui, sent } = await openTask(
    task({ inputType: 'radio', options: ['approve', 'reject', 'escalate'], formTitle: 'Decision?' }),
  );
  t.teardown(ui.unmount);
  press(ui, 'j', KEY.enter);
  await frameMatching(ui.lastFrame, /›\(•\) reject/);
  press(ui, 'j', KEY.enter);
  const frame = await frameMatching(ui.lastFrame, /›\(•\) escalate/);
  t.match(frame, / \( \) reject/, 'one choice only');
  t.same(sent, [], 'enter chooses, it does not send');
  press(ui, KEY.ctrlS);
  await frameMatching(ui.lastFrame, /completed/);
  t.same(sent, complete({ inputValue: 'escalate' }));
});

t.test('checkbox: space toggles several, sent as an array in option order', async (t) => {
  const { ui, sent } = await openTask(task({ inputType: 'checkbox', options: [1, 2, 3], formTitle: 'Which lines?' }));
  t.teardown(ui.unmount);
  t.match(ui.lastFrame(), /choose any\n\s+›\[ \] 1\n\s+ \[ \] 2\n\s+ \[ \] 3/);
  t.match(ui.lastFrame(), /space\s+toggle/);
  press(ui, KEY.down, KEY.down, ' ', KEY.up, KEY.up, ' ', KEY.down, ' ', ' ');
  await frameMatching(ui.lastFrame, /\[x\] 1\n\s+›\[ \] 2\n\s+ \[x\] 3/); // toggled on, on, on then off
  t.same(sent, [], 'toggling sends nothing');
  press(ui, KEY.ctrlS);
  await frameMatching(ui.lastFrame, /completed/);
  t.same(sent, complete({ inputValue: [1, 3] }));
});

t.test('file: a path typed in is uploaded to the file store, its fileId sent', async (t) => {
  const { ui, sent, uploads } = await openTask(task({ inputType: 'file', formTitle: 'Attach the invoice' }));
  t.teardown(ui.unmount);
  t.match(ui.lastFrame(), /file \* \[▌\]\s+a file path \(uploaded to the file store when sent\), or a fileId/);
  press(ui, KEY.enter);
  await frameMatching(ui.lastFrame, /✖ required/);
  press(ui, '/srv/in/invoice-42.pdf', KEY.enter);
  await frameMatching(ui.lastFrame, /completed/);
  t.same(uploads, ['/srv/in/invoice-42.pdf']);
  t.same(sent, complete({ inputValue: `file_${'0'.repeat(31)}1` }));
});

t.test('file: a fileId typed in goes as it is; an upload that fails says why and sends nothing', async (t) => {
  const id = `file_${'a'.repeat(32)}`;
  const first = await openTask(task({ inputType: 'file', formTitle: 'Attach the invoice' }));
  t.teardown(first.ui.unmount);
  press(first.ui, id, KEY.enter);
  await frameMatching(first.ui.lastFrame, /completed/);
  t.same(first.uploads, []);
  t.same(first.sent, complete({ inputValue: id }));
  const failing = await openTask(task({ inputType: 'file', formTitle: 'Attach the invoice' }), {
    upload: () => Promise.reject(new WfxError('PAYLOAD_TOO_LARGE', 'a file may hold 26214400 bytes at most')),
  });
  t.teardown(failing.ui.unmount);
  press(failing.ui, '/tmp/huge.bin', KEY.enter);
  await frameMatching(failing.ui.lastFrame, /cannot upload \/tmp\/huge\.bin: PAYLOAD_TOO_LARGE/);
  t.same(failing.sent, [], 'nothing sent');
});

const FORM = task({
  inputType: 'form',
  formTitle: 'Approve order 42 of 250 EUR?',
  fields: [
    { name: 'approve', type: 'boolean', required: true },
    { name: 'size', type: 'select', options: ['S', 'M', 'L'] },
    { name: 'count', type: 'number', required: true },
    { name: 'due', type: 'date', label: 'due date' },
    { name: 'note', type: 'text' },
    { name: 'tags', type: 'array' },
    { name: 'colours', type: 'array', options: ['red', 'blue'] },
  ],
});

t.test(
  'form: every field by its type, required marked, tab / shift+tab / enter move, problems at their fields, the fields object sent',
  async (t) => {
    const { ui, sent } = await openTask(FORM, { columns: 80 });
    t.teardown(ui.unmount);
    const first = ui.lastFrame();
    t.match(first, /› approve \* ›\( \) yes\s+\( \) no/, 'a boolean is a yes / no choice, on one line');
    t.match(first, /  size  \( \) S\s+\( \) M\s+\( \) L/);
    t.match(first, /  count \* \[\]\s+a number/);
    t.match(first, /  due date \[\]\s+YYYY-MM-DD/, 'the label when there is one');
    t.match(first, /  note \[\]/);
    t.match(first, /  tags \[\]\s+values separated by commas/, 'an array without options is a list typed in');
    t.match(first, /  colours  \[ \] red\s+\[ \] blue/, 'an array with options is a checkbox');
    t.match(first, /\* required/);
    t.match(first, /tab\s+next\s+← →\s+option\s+space\s+choose\s+ctrl\+s\s+complete\s+ctrl\+x\s+cancel\s+esc\s+back/);
    t.same(widerThan(first, 80), [], 'the form fits 80 columns');

    press(ui, KEY.ctrlS);
    const refused = await frameMatching(ui.lastFrame, /approve \*.*\n\s+✖ required/);
    t.match(refused, /count \* \[\]\s+a number\n\s+✖ required/, 'each problem at its field');
    t.same(widerThan(refused, 80), [], 'with its problems too');
    t.same(sent, []);

    press(ui, ' '); // approve: yes
    await frameMatching(ui.lastFrame, /›\(•\) yes/);
    press(ui, KEY.tab, KEY.right, KEY.right, ' '); // size: L, moving along the line
    await frameMatching(ui.lastFrame, /› size  .*›\(•\) L/);
    press(ui, KEY.left, ' ', KEY.right, ' '); // M, then L again
    await frameMatching(ui.lastFrame, /› size  \( \) S\s+\( \) M\s+›\(•\) L/);
    press(ui, KEY.tab, '12', KEY.enter); // count; enter moves on
    await frameMatching(ui.lastFrame, /› due date \[▌\]/);
    press(ui, KEY.shiftTab);
    await frameMatching(ui.lastFrame, /› count \* \[12▌\]/);
    press(ui, KEY.tab, '2026-12-01', KEY.tab, 'rush', KEY.tab, 'a, b ,', KEY.tab, KEY.right, ' ');
    await frameMatching(ui.lastFrame, /› colours  \[ \] red\s+›\[x\] blue/);
    press(ui, KEY.tab);
    await frameMatching(ui.lastFrame, /› approve/); // tab goes round
    press(ui, KEY.ctrlS);
    await frameMatching(ui.lastFrame, /completed/);
    t.same(
      sent,
      complete({
        approve: true,
        size: 'L',
        count: 12,
        due: '2026-12-01',
        note: 'rush',
        tags: ['a', 'b'],
        colours: ['blue'],
      }),
    );
  },
);

t.test(
  "form: empty optional fields are left out; a 422 from the API shows at its field like the validator's",
  async (t) => {
    const answers: Array<() => Promise<unknown>> = [
      () =>
        Promise.reject(
          new WfxError('VALIDATION_ERROR', 'the data does not fit the form input: count: must be below 10', {
            details: { problems: ['count: must be below 10'] },
          }),
        ),
      () => Promise.reject(new WfxError('NODE_NOT_WAITING', `node ask of ${ID} is not waiting for input`)),
    ];
    const { ui, sent } = await openTask(FORM, { answer: () => answers.shift()!() });
    t.teardown(ui.unmount);
    press(ui, 'j', ' ', KEY.tab, KEY.tab, '12', KEY.ctrlS);
    await frameMatching(ui.lastFrame, /count \* \[12▌\]\s+a number\n\s+✖ must be below 10/);
    t.same(sent, complete({ approve: false, count: 12 }));
    press(ui, KEY.ctrlS);
    await frameMatching(ui.lastFrame, /✖ NODE_NOT_WAITING: node ask of .* is not waiting for input/);
    t.match(ui.lastFrame(), /Approve order 42/, 'the form stays open');
  },
);

t.test('a user task is a form; one with no fields completes with {}', async (t) => {
  const { ui, sent } = await openTask(
    task({ nodeType: 'userTask', inputType: 'form', fields: [], formTitle: 'Sign off', assignee: 'ann' }),
  );
  t.teardown(ui.unmount);
  t.match(ui.lastFrame(), /\(user task\)/);
  t.match(ui.lastFrame(), /this form has no fields: complete sends \{\}/);
  press(ui, KEY.ctrlS);
  await frameMatching(ui.lastFrame, /completed/);
  t.same(sent, complete({}));
});

t.test('keys that arrive in one chunk (typed fast, tmux send-keys, a paste) each count', async (t) => {
  const { ui, sent } = await openTask(FORM);
  t.teardown(ui.unmount);
  ui.stdin.write(' \t\t7\r'); // yes, next, next, 7, enter (moves on)
  await frameMatching(ui.lastFrame, /approve \* +\(•\) yes[\s\S]*count \* \[7\][\s\S]*› due date \[▌\]/);
  ui.stdin.write('\u0013');
  await frameMatching(ui.lastFrame, /completed/);
  t.same(sent, complete({ approve: true, count: 7 }));
});

t.test(
  'esc closes the form while an answer is being sent (a hung POST leaves no key dead); the late answer is ignored',
  async (t) => {
    const pending: Array<{ resolve: (v: unknown) => void; reject: (e: unknown) => void }> = [];
    const { ui, sent, captures } = await openTask(task({ inputType: 'textbox', formTitle: 'Ship it?' }), {
      answer: () => new Promise((resolve, reject) => pending.push({ resolve, reject })),
    });
    t.teardown(ui.unmount);
    press(ui, 'yes', KEY.enter);
    await frameMatching(ui.lastFrame, /sending…/);
    t.equal(sent.length, 1);
    press(ui, KEY.esc);
    await frameMatching(ui.lastFrame, /enter\s+answer/);
    t.same(captures, [true, false], 'the shell has its keys back');
    pending[0]!.resolve({ status: 'resumed' });
    await Promise.resolve();
    press(ui, KEY.enter); // a new form of the same task: the old answer must not close it
    await frameMatching(ui.lastFrame, /Ship it\?\n\n› answer \[▌\]/);
    press(ui, 'x');
    const frame = await frameMatching(ui.lastFrame, /\[x▌\]/);
    t.notMatch(frame, /completed|sending/, 'the late answer changed nothing');
    press(ui, KEY.enter);
    await frameMatching(ui.lastFrame, /sending…/);
    press(ui, KEY.esc);
    await frameMatching(ui.lastFrame, /enter\s+answer/);
    pending[1]!.reject(new WfxError('NODE_NOT_WAITING', 'late'));
    await Promise.resolve();
    press(ui, KEY.enter);
    const reopened = await frameMatching(ui.lastFrame, /› answer \[▌\]/);
    t.notMatch(reopened, /late|✖/, 'a late failure is not shown either');
  },
);

t.test("an agent's tool call waiting for approval: what it asks and why, its arguments editable", async (t) => {
  const args = JSON.stringify({ to: 'ada@example.com' }, null, 2);
  const { ui, sent } = await openTask(
    task({
      nodeId: 'agent',
      nodeName: 'Mailer',
      nodeType: 'callAgent',
      inputType: 'form',
      formTitle: 'Approve the call of send_email',
      fields: [
        { name: 'arguments', type: 'text', label: 'Arguments (JSON): edit them to change the call', default: args },
      ],
      approval: {
        callId: 'c1',
        tool: 'send_email',
        arguments: { to: 'ada@example.com' },
        reasoning: 'I will email Ada first.',
        server: 'http://127.0.0.1:9/mcp',
      },
    }),
    { columns: 140 },
  );
  t.teardown(ui.unmount);
  const frame = ui.lastFrame() ?? '';
  t.match(frame, /Mailer \(approval of a tool call\)/);
  t.match(frame, /the agent asks to call send_email at http:\/\/127\.0\.0\.1:9\/mcp/);
  t.match(frame, /it said: I will email Ada first\./);
  t.match(frame, /Approve the call of send_email/);
  t.same(sent, []);
});
