/* A function called at most once per interval, however often it is asked for (the last ask is never lost). */
import { useEffect, useMemo, useRef } from 'preact/hooks';

/** `fn`, called at once if it was not called in the last `ms`, else once when the interval ends. */
export function useThrottled(fn: () => void, ms: number): () => void {
  const latest = useRef(fn);
  latest.current = fn;
  const state = useRef({ last: Number.NEGATIVE_INFINITY, timer: null as ReturnType<typeof setTimeout> | null });
  useEffect(
    () => () => {
      if (state.current.timer !== null) clearTimeout(state.current.timer);
    },
    [],
  );
  return useMemo(
    () => () => {
      const s = state.current;
      if (s.timer !== null) return;
      const wait = s.last + ms - Date.now();
      const run = () => {
        s.timer = null;
        s.last = Date.now();
        latest.current();
      };
      if (wait <= 0) run();
      else s.timer = setTimeout(run, wait);
    },
    [ms],
  );
}
