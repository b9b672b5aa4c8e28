/*
 * The executions a list screen has opened, one over another: enter on a row of the list opens
 * it, enter on a child in its detail opens the child over it, esc goes back one. Each move puts
 * the cursor of the shown execution's children back on the first.
 */
import { useState } from 'react';

/** The opened executions and the moves between them. */
export interface Opened {
  /** The ids opened, the list's first, the one shown last. */
  readonly opened: readonly string[];
  /** The execution shown: the last opened, or null (the list). */
  readonly open: string | null;
  /** The cursor in the shown execution's children. */
  readonly childCursor: number;
  readonly setChildCursor: (at: number) => void;
  /** Opens `id` from the list, in place of whatever was open. */
  readonly openFromList: (id: string) => void;
  /** Opens child `id` over the one shown. */
  readonly openChild: (id: string) => void;
  /** Closes the one shown, back to the one under it (or the list). */
  readonly back: () => void;
}

/** The executions a screen opened from its list, and the moves between them. */
export function useOpened(): Opened {
  const [opened, setOpened] = useState<readonly string[]>([]);
  const [childCursor, setChildCursor] = useState(0);
  const move = (next: (o: readonly string[]) => readonly string[]) => {
    setOpened(next);
    setChildCursor(0);
  };
  return {
    opened,
    open: opened.at(-1) ?? null,
    childCursor,
    setChildCursor,
    openFromList: (id) => move(() => [id]),
    openChild: (id) => move((o) => [...o, id]),
    back: () => move((o) => o.slice(0, -1)),
  };
}
