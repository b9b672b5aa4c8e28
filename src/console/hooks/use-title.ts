/* The document's title, for the page shown. */
import { useEffect } from 'preact/hooks';

/** Sets the title to `text · wfx console` while the component is shown. */
export function useTitle(text: string): void {
  useEffect(() => {
    document.title = text ? `${text} · wfx console` : 'wfx console';
  }, [text]);
}
