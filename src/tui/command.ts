/* The `:` command line (as k9s): what a typed line means, and completing its command name. */
import { SCREENS, type ScreenName } from './screens/screen.js';

/** What a command line asks for. */
export type Command =
  | { readonly kind: 'screen'; readonly screen: ScreenName }
  | { readonly kind: 'open'; readonly id: string }
  | { readonly kind: 'quit' }
  | { readonly kind: 'none' }
  /** A line that is not a command: `problem` says why, in words. */
  | { readonly kind: 'unknown'; readonly problem: string };

/** Every command name and what it does; aliases name the same thing. */
const NAMES: ReadonlyArray<readonly [string, Command]> = [
  ...SCREENS.map((s) => [s, { kind: 'screen', screen: s }] as const),
  ['exec', { kind: 'screen', screen: 'executions' }],
  ['open', { kind: 'open', id: '' }],
  ['quit', { kind: 'quit' }],
  ['q', { kind: 'quit' }],
];

/** The command names Tab completes to and the help lists. */
export const COMMAND_NAMES: readonly string[] = NAMES.map(([n]) => n);

/** The names `word` begins, as the targets they name (aliases of one target count once). Pure. */
function matching(word: string): Array<readonly [string, Command]> {
  const exact = NAMES.find(([n]) => n === word);
  if (exact) return [exact];
  const found = NAMES.filter(([n]) => n.startsWith(word));
  return found.filter(([, c], i) => found.findIndex(([, d]) => JSON.stringify(d) === JSON.stringify(c)) === i);
}

/**
 * What `line` (typed after `:`) asks for (pure): a command name or a unique prefix of one
 * (`:tr` is triggers, `:f` could be flows or failures), `open` followed by an execution id or
 * a unique prefix of one. Case does not matter; an empty line asks nothing.
 */
export function parseCommand(line: string): Command {
  const [word = '', ...rest] = line.trim().split(/\s+/);
  if (word === '') return { kind: 'none' };
  const found = matching(word.toLowerCase());
  if (found.length === 0)
    return { kind: 'unknown', problem: `no command ${word}: try ${SCREENS.join(', ')}, open <id>, quit` };
  if (found.length > 1) return { kind: 'unknown', problem: `${word} could be ${found.map(([n]) => n).join(' or ')}` };
  const command = found[0]![1];
  if (command.kind === 'open') {
    if (rest.length !== 1) return { kind: 'unknown', problem: 'open takes one execution id (or its first characters)' };
    return { kind: 'open', id: rest[0]! };
  }
  if (rest.length > 0) return { kind: 'unknown', problem: `${found[0]![0]} takes no argument` };
  return command;
}

/**
 * Tab on `line` (pure): the command name completed when one name fits what is typed (with a
 * space after `open`), else the longest start the names that fit share; the line as it is
 * once the name is followed by a space.
 */
export function completeCommand(line: string): string {
  if (/\s/.test(line.trimStart())) return line;
  const word = line.trim().toLowerCase();
  const names = COMMAND_NAMES.filter((n) => n.startsWith(word) && n !== 'q');
  if (names.length === 0) return line;
  if (names.length === 1) return names[0] === 'open' ? 'open ' : names[0]!;
  let common = names[0]!;
  for (const n of names) while (!n.startsWith(common)) common = common.slice(0, -1);
  return common.length > word.length ? common : line;
}
