import { EventEmitter } from 'node:events';
import { setImmediate as yieldToReact } from 'node:timers/promises';
import { render as inkRender, type Instance } from 'ink';
import type { ReactElement } from 'react';
import { eventually } from './eventually.js';

/** A terminal of `columns` for Ink: keeps every frame written (ink-testing-library's is always 100 wide). */
class Stdout extends EventEmitter {
  readonly frames: string[] = [];
  constructor(readonly columns: number) {
    super();
  }
  readonly rows = 24;
  write = (frame: string) => {
    this.frames.push(frame);
    return true;
  };
}

/** Keys typed into the TUI, one write at a time (as ink-testing-library's stdin). */
class Stdin extends EventEmitter {
  isTTY = true;
  private data: string | null = null;
  /** Called before each key is written (see renderAt). */
  beforeKey: () => void = () => undefined;
  write = (data: string) => {
    this.beforeKey();
    this.data = data;
    this.emit('readable');
    this.emit('data', data);
  };
  read = () => {
    const d = this.data;
    this.data = null;
    return d;
  };
  setEncoding() {}
  setRawMode() {}
  resume() {}
  pause() {}
  ref() {}
  unref() {}
}

export interface Rendered {
  readonly lastFrame: () => string;
  readonly stdin: { write(data: string): void };
  readonly unmount: () => void;
  /** Whether the app has exited (useApp().exit(), e.g. the shell's q). */
  readonly exited: () => boolean;
}

/** Renders `tree` in a terminal `columns` wide (what ink-testing-library does at 100), ready for keys. */
export function renderAt(tree: ReactElement, columns: number): Rendered {
  const stdout = new Stdout(columns);
  const stdin = new Stdin();
  const instance: Instance = inkRender(tree, {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stderr: new Stdout(columns) as unknown as NodeJS.WriteStream,
    stdin: stdin as unknown as NodeJS.ReadStream,
    debug: true,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  // React runs a paint's effects (useInput attaches its listener in one) at the latest before
  // the next render, and a busy machine may not have run them by the time a test sees the frame
  // and types: render again before every key (Ink renders in React's legacy mode, synchronously),
  // so each key is heard by the screen it was typed at.
  instance.rerender(tree);
  stdin.beforeKey = () => instance.rerender(tree);
  let exited = false;
  void instance.waitUntilExit().then(
    () => (exited = true),
    () => (exited = true),
  );
  return {
    lastFrame: () => stdout.frames.at(-1) ?? '',
    stdin,
    unmount: () => instance.unmount(),
    exited: () => exited,
  };
}

/** Keys as a terminal sends them. */
export const KEY = {
  enter: '\r',
  esc: '\u001b',
  tab: '\t',
  shiftTab: '\u001b[Z',
  up: '\u001b[A',
  down: '\u001b[B',
  right: '\u001b[C',
  left: '\u001b[D',
  backspace: '\u007f',
  ctrlS: '\u0013',
  ctrlU: '\u0015',
  ctrlX: '\u0018',
} as const;

/**
 * Waits (at most `timeoutMs`) until the last frame matches `re`, then lets React attach the
 * handlers of what it just drew (Ink listens for keys from an effect), so the next key reaches
 * them. Returns the frame; the error of a timeout shows the last frame.
 */
export async function frameMatching(
  lastFrame: () => string | undefined,
  re: RegExp,
  timeoutMs = 10_000,
): Promise<string> {
  const matched = await eventually(
    `a frame matches ${re}`,
    () => {
      const frame = lastFrame() ?? '';
      return re.test(frame) && { frame };
    },
    { withinMs: timeoutMs },
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last:\n${lastFrame()}`);
  });
  await yieldToReact();
  return matched.frame;
}

/** Waits (at most 10 s) until `ok()`. */
export async function until(ok: () => boolean, what: string): Promise<void> {
  await eventually(what, ok, { withinMs: 10_000 });
}

/** The lines of a frame wider than `columns` (colour codes are not counted). */
export function widerThan(frame: string, columns: number): string[] {
  return frame.split('\n').filter((l) => Array.from(l.replace(/\u001b\[[0-9;]*m/g, '')).length > columns);
}
