import { useCallback, useState } from 'react';
import { useInput } from 'ink';

/**
 * A screen's one-line notice ("cancelled …", "started …"), cleared by the next key the operator
 * presses, so it never stays on after it was read. A notice set while a key is being handled
 * lands once every handler of that key has run (their order is Ink's), so that key does not
 * clear it.
 */
export function useNotice(active: boolean): [string | null, (notice: string | null) => void] {
  const [notice, setNotice] = useState<string | null>(null);
  useInput(() => setNotice(null), { isActive: active && notice !== null });
  const set = useCallback((next: string | null) => queueMicrotask(() => setNotice(next)), []);
  return [notice, set];
}
