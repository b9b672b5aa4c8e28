import type { Key } from 'ink';

/**
 * One key applied to a one-line text field (pure): printable text is appended (a paste too, its
 * control characters dropped), backspace/delete removes the last character, ctrl-u clears.
 * Keys that are not editing (arrows, tab, enter, esc, other ctrl keys) leave it as it is: the
 * caller gives those their own meaning.
 */
export function editText(value: string, input: string, key: Key): string {
  if (key.backspace || key.delete) return Array.from(value).slice(0, -1).join('');
  if (key.ctrl && input === 'u') return '';
  if (
    key.ctrl ||
    key.meta ||
    key.escape ||
    key.return ||
    key.tab ||
    key.upArrow ||
    key.downArrow ||
    key.leftArrow ||
    key.rightArrow ||
    key.pageUp ||
    key.pageDown
  )
    return value;

  return value + input.replace(/[\u0000-\u001f\u007f]/g, '');
}
