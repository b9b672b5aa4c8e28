import type { Key } from 'ink';
import t from 'tap';
import { cursorAt, moveCursor } from '../../src/tui/cursor.js';

const key = (k: Partial<Key> = {}) => k as Key;

t.test('moveCursor: ↑/k and ↓/j within the rows; other keys leave it', async (t) => {
  t.equal(moveCursor(2, 5, '', key({ downArrow: true })), 3);
  t.equal(moveCursor(2, 5, 'k', key()), 1);
  t.equal(moveCursor(0, 5, 'k', key()), 0, 'not above the first');
  t.equal(moveCursor(4, 5, 'j', key()), 4, 'not below the last');
  t.equal(moveCursor(9, 3, '', key({ upArrow: true })), 1, 'a list that shrank under it: up from its last row');
  t.equal(moveCursor(0, 0, 'j', key()), 0, 'an empty list');
  t.equal(moveCursor(2, 5, 'x', key()), 2);
});

t.test('cursorAt: the row the cursor stands on, 0 in an empty list', async (t) => {
  t.equal(cursorAt(3, 5), 3);
  t.equal(cursorAt(7, 5), 4);
  t.equal(cursorAt(2, 0), 0);
});
