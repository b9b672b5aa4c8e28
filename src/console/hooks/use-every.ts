/* A callback run on a fixed period while the component is shown (a screen that reads again by itself). */
import { useEffect, useRef } from 'preact/hooks';

/** Calls `fn` (its latest version) every `ms` milliseconds while mounted. */
export function useEvery(ms: number, fn: () => void): void {
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => {
    const timer = setInterval(() => latest.current(), ms);
    return () => clearInterval(timer);
  }, [ms]);
}
