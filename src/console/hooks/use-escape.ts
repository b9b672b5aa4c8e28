/* Escape closes what is open (a panel), unless a dialog has it. */
import { useEffect, useRef } from 'preact/hooks';

/** Calls `onEscape` when Escape is pressed anywhere on the page while `active` (not while a modal dialog is open). */
export function useEscape(active: boolean, onEscape: () => void): void {
  const latest = useRef(onEscape);
  latest.current = onEscape;
  useEffect(() => {
    if (!active) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || e.defaultPrevented || document.querySelector('dialog[open]')) return;
      latest.current();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [active]);
}
