import type { Key } from 'ink';
import t from 'tap';
import { editText } from '../../src/tui/text-edit.js';

const key = (k: Partial<Key> = {}) => k as Key;

t.test('editText: appends printable text, drops control characters of a paste', async (t) => {
  t.equal(editText('ab', 'c', key()), 'abc');
  t.equal(editText('', 'x\ty\u0007z', key()), 'xyz', 'a paste without its control characters');
});

t.test('editText: backspace removes one character (not one UTF-16 unit), ctrl-u clears', async (t) => {
  t.equal(editText('a💡', '', key({ backspace: true })), 'a');
  t.equal(editText('abc', '', key({ delete: true })), 'ab');
  t.equal(editText('abc', 'u', key({ ctrl: true })), '');
});

t.test('editText: keys that are not editing leave the value as it is', async (t) => {
  for (const k of [
    'return',
    'tab',
    'escape',
    'upArrow',
    'downArrow',
    'leftArrow',
    'rightArrow',
    'pageUp',
    'pageDown',
    'meta',
  ] as const) {
    t.equal(editText('abc', 'q', key({ [k]: true })), 'abc', k);
  }
  t.equal(editText('abc', 's', key({ ctrl: true })), 'abc', 'another ctrl key');
});
