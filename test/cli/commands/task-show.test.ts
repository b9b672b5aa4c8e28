import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { startDaemon, wfxIn } from '../../helpers/cli.js';

const FORM = `processId: 5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b
name: Order form
nodes:
  start: { type: startEvent, next: ask }
  ask:
    type: inputNode
    inputType: form
    formTitle: "Order {order}"
    fields:
      - { name: approve, type: boolean, required: true }
      - { name: size, type: select, options: [S, M, L], default: M, label: Size }
      - { name: qty, type: number, required: true }
      - { name: note, type: text }
      - { name: tags, type: array }
    next: done
  done: { type: endEvent }
`;
const TWO = `processId: 6f7a8b9c-0d1e-4f2a-9b3c-4d5e6f7a8b9c
name: Two asks
nodes:
  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [a, b] }
  a: { type: inputNode, inputType: number, next: join }
  b: { type: inputNode, inputType: select, options: [yes, no], next: join }
  join: { type: parallelGateway, next: done }
  done: { type: endEvent }
`;

/** The words of a command line as a POSIX shell splits it (plain words and '...' only: what completeLine writes). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) =>
    m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]!,
  );
}

t.test(
  'wfx task show: the form (fields with type, options, required, default, label) and a complete line that works',
  async (t) => {
    const cwd = t.testdir({ 'form.yaml': FORM });
    await startDaemon(t, { cwd });
    const run = (args: string[]) => wfxIn(args, { cwd });
    t.equal((await run(['flow', 'publish', 'form.yaml'])).code, 0);
    const id = (await run(['run', 'Order form', '--set', 'order=7'])).stdout.trim();

    const list = await run(['task', 'list']);
    t.equal(list.code, 0, list.stderr);
    t.match(list.stdout.split('\n')[0], /^ID\s+NODE\s+INPUT\s+FLOW\s+WAITING SINCE\s+DUE\s+FIELDS\s+TITLE$/);
    t.match(
      list.stdout,
      'approve:boolean*, size:S|M|L, qty:number*, note:text, tags:array',
      'the list says what the form wants',
    );

    const show = await run(['task', 'show', id.slice(0, 23)]);
    t.equal(show.code, 0, show.stderr);
    const lines = show.stdout.split('\n');
    t.equal(lines[0], `${id} ask (inputNode, form): Order 7`);
    t.match(show.stdout, /^FIELD\s+TYPE\s+REQUIRED\s+DEFAULT\s+OPTIONS\s+LABEL$/m);
    t.match(show.stdout, /^approve\s+boolean\s+yes\s+-\s+-$/m);
    t.match(show.stdout, /^size\s+select\s+no\s+"M"\s+S\|M\|L\s+Size$/m);
    t.match(show.stdout, /^qty\s+number\s+yes\s+-\s+-$/m);

    const json = await run(['task', 'show', id, 'ask', '--json']);
    t.equal(json.code, 0, json.stderr);
    const [task] = JSON.parse(json.stdout) as Array<{ nodeId: string; fields: unknown[]; complete: string }>;
    t.equal(task!.nodeId, 'ask');
    t.equal(task!.fields.length, 5);
    t.equal(
      task!.complete,
      `wfx task complete ${id} ask --data '{"tags":[]}' --set approve=true --set size=M --set qty=0 --set note=TEXT`,
    );
    t.match(show.stdout, `  ${task!.complete}\n`, 'the same line in the text');

    // The line, pasted as it is, answers the task.
    const words = shellWords(task!.complete);
    t.same(words.slice(0, 2), ['wfx', 'task']);
    const done = await run([...words.slice(1), '--json']);
    t.equal(done.code, 0, done.stderr);
    const inst = JSON.parse((await run(['instances', 'get', id, '--json'])).stdout) as {
      state: string;
      data: Record<string, unknown>;
    };
    t.equal(inst.state, 'COMPLETED');
    t.same(inst.data.formData, { approve: true, size: 'M', qty: 0, note: 'TEXT', tags: [] });

    const gone = await run(['task', 'show', id]);
    t.equal(gone.code, 1);
    t.match(gone.stderr, /^NODE_NOT_WAITING: /);
  },
);

t.test('wfx task complete|cancel without the node: the one waiting, else AMBIGUOUS_ID naming them', async (t) => {
  const cwd = t.testdir({ 'two.yaml': TWO });
  await startDaemon(t, { cwd });
  const run = (args: string[]) => wfxIn(args, { cwd });
  t.equal((await run(['flow', 'publish', 'two.yaml'])).code, 0);
  const id = (await run(['run', 'Two asks'])).stdout.trim();

  const both = await run(['task', 'complete', id, '--set', 'inputValue=3']);
  t.equal(both.code, 2, 'two nodes wait: a usage error');
  t.match(both.stderr, /^AMBIGUOUS_ID: .*\(a, b\)/);

  const shown = JSON.parse((await run(['task', 'show', id, '--json'])).stdout) as Array<{ nodeId: string }>;
  t.same(
    shown.map((s) => s.nodeId),
    ['a', 'b'],
    'show lists every waiting task',
  );
  t.equal((await run(['task', 'show', id, 'b', '--json'])).stdout.includes('"complete": "wfx task complete'), true);
  t.equal((await run(['task', 'complete', id, 'a', '--set', 'inputValue=3'])).code, 0);
  const one = await run(['task', 'complete', id, '--set', 'inputValue=yes']);
  t.equal(one.code, 0, one.stderr);
  t.equal(one.stdout, `${id} resumed at b\n`, 'the one node left waiting');
  const none = await run(['task', 'cancel', id]);
  t.equal(none.code, 1);
  t.match(none.stderr, /^NODE_NOT_WAITING: /);
});
