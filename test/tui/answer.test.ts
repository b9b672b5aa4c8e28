import t from 'tap';
import type { Key } from 'ink';
import { dataOf, draftFor, keysOf, NO_KEY, problemsOf, typeInto, valueOf } from '../../src/tui/answer.js';

const key = (k: Partial<Key> = {}): Key => ({ ...NO_KEY, ...k });

t.test('keysOf splits a chunk of keys a terminal delivered at once, and keeps a paste whole', async (t) => {
  t.same(keysOf('a', key()), [['a', key()]], 'one key as Ink gave it');
  t.same(keysOf(' \tship it\r\u0013', key()), [
    [' ', key()],
    ['', key({ tab: true })],
    ['ship', key()],
    [' ', key()],
    ['it', key()],
    ['', key({ return: true })],
    ['s', key({ ctrl: true })],
  ]);
  t.same(keysOf('ab\u007f', key()), [
    ['ab', key()],
    ['', key({ backspace: true })],
  ]);
  t.same(keysOf('\u001b[B ', key()), [['\u001b[B ', key()]], 'escape sequences are left to Ink');
  t.same(
    keysOf('line one\rline\ttwo', key()),
    [['line one\rline\ttwo', key()]],
    'a paste of lines is text: it does not submit half of it',
  );
  t.same(
    keysOf('line one\r\n', key()),
    [
      ['line', key()],
      [' ', key()],
      ['one', key()],
      ['', key({ return: true })],
      ['\n', key()],
    ],
    'text then a final enter are keys',
  );
});

t.test("the data of each input type, and the API's validator naming what does not fit", async (t) => {
  const number = { inputType: 'number' as const, options: null, fields: null };
  let d = draftFor(number);
  d = { ...d, fields: [typeInto(d.fields[0]!, ' 1e3 ', key())] };
  t.same(dataOf(number, d), { inputValue: 1000 });
  t.same(problemsOf(number, { inputValue: 'x' }), ['inputValue: must be a number']);
  t.same(problemsOf(number, {}), ['inputValue: required']);
  const list = draftFor({ inputType: 'form', options: null, fields: [{ name: 'tags', type: 'array' }] }).fields[0]!;
  t.same(valueOf(typeInto(list, 'a, b,, c', key())), ['a', 'b', 'c']);
  const area = draftFor({ inputType: 'textarea', options: null, fields: null }).fields[0]!;
  t.same(
    valueOf(typeInto(typeInto(area, 'one\r\ntwo', key()), 'x', key({ ctrl: true }))),
    'one\ntwo',
    'a pasted line break kept; ctrl keys never typed',
  );
  const line = draftFor({ inputType: 'textbox', options: null, fields: null }).fields[0]!;
  t.same(valueOf(typeInto(line, 'one\ntwo', key())), 'one two', 'a one-line field turns a pasted break into a space');
});
