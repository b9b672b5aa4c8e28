import type { WfxClient } from '../../client/client.js';
import type { Copy } from '../clipboard.js';

/** The screens, in the order of their number keys (1, 2, ...). */
export const SCREENS = ['executions', 'tasks', 'flows', 'triggers', 'failures'] as const;
export type ScreenName = (typeof SCREENS)[number];

/** What the shell gives every screen. */
export interface ScreenProps {
  readonly client: WfxClient;
  /** Terminal rows for the whole TUI (the screen gets this minus the top line and the key bar). */
  readonly rows: number;
  readonly now: Date;
  /** False while the help covers the screen: the screen ignores keys then. */
  readonly active: boolean;
  /** Bumped whenever GET /events says an execution started or ended: screens re-read then. */
  readonly changes: number;
  /**
   * A screen that takes typed text (a form, a search) or a y/n answer says so: the shell then
   * leaves every key to it (q, ?, 1-5 are text there). Esc gives them back.
   */
  readonly setCapture: (capturing: boolean) => void;
  /** Puts an id on the clipboard (`y`); default: OSC 52 to the terminal (terminalCopy). */
  readonly copy?: Copy;
}

/** The keys every screen has, after its own. */
export const SHELL_KEYS: ReadonlyArray<readonly [string, string]> = [
  ['1-5', 'screens'],
  [':', 'command'],
  ['?', 'help'],
  ['q', 'quit'],
];
