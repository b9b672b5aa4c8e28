/* The time now, moving on every second while `ticking` (a running execution's durations). */
import { useEffect, useState } from 'preact/hooks';

/** Date.now(), read again every `ms` (default 1000) while `ticking`. */
export function useNow(ticking: boolean, ms = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!ticking) return;
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ticking, ms]);
  return ticking ? now : Date.now();
}
