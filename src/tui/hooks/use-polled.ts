import { useCallback, useEffect, useRef, useState } from 'react';
import { errorCode, errorText } from '../error-text.js';

/** What a polled read gives a screen: the latest answer (kept while a re-read fails), and the latest failure. */
export interface Polled<T> {
  /** The latest answer; null until the first one. */
  readonly data: T | null;
  /** The latest read's failure (`CODE: message`) and its code; null once a read succeeds. */
  readonly error: { readonly code: string | null; readonly text: string } | null;
  /** Reads again now (after the screen changed something, e.g. answered a task). */
  readonly reload: () => void;
}

/**
 * Reads `load()` now, again whenever `changes` moves (an execution started or ended somewhere),
 * on `reload()`, and every `intervalMs` unless it is null (the interval is cleared on unmount). An answer that comes back after
 * a newer read started is dropped, so the screen never goes back in time.
 */
export function usePolled<T>(load: () => Promise<T>, changes: number, intervalMs: number | null): Polled<T> {
  const [state, setState] = useState<Omit<Polled<T>, 'reload'>>({ data: null, error: null });
  const loadRef = useRef(load);
  loadRef.current = load;
  const seq = useRef(0);
  const mounted = useRef(true);
  const read = useRef(() => {
    const mine = ++seq.current;
    loadRef.current().then(
      (data) => mounted.current && mine === seq.current && setState({ data, error: null }),
      (err: unknown) =>
        mounted.current &&
        mine === seq.current &&
        setState((s) => ({ data: s.data, error: { code: errorCode(err), text: errorText(err) } })),
    );
  });
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);
  useEffect(() => read.current(), [changes]);
  useEffect(() => {
    if (intervalMs === null) return;
    const timer = setInterval(() => read.current(), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  const reload = useCallback(() => read.current(), []);
  return { ...state, reload };
}
