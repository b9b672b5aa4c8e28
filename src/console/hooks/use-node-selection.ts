/* The diagram node a page's panel is open on, kept in the URL (`?node=`). */
import { useLocation } from 'preact-iso/router';
import { useCallback } from 'preact/hooks';
import type { NodePath } from '../diagram/diagram.js';
import { nodeParam, parseNodeParam } from '../pages/execution-view.js';
import { useEscape } from './use-escape.js';

/** What useNodeSelection gives a page. */
export interface NodeSelection {
  /** The node the URL names, or null. */
  readonly selected: NodePath | null;
  /** Opens the panel on `p` (null: closes it), in the URL without a new history entry. */
  readonly select: (p: NodePath | null) => void;
  /** Closes the panel and puts the focus back on its node. */
  readonly close: () => void;
}

/** The node selected by the URL; Escape closes its panel unless `escapeTaken` (a dialog has it). */
export function useNodeSelection(escapeTaken = false): NodeSelection {
  const location = useLocation();
  const selected = parseNodeParam(location.query.node);
  const select = useCallback(
    (p: NodePath | null) => {
      const q = new URLSearchParams(location.query);
      if (p) q.set('node', nodeParam(p));
      else q.delete('node');
      const text = q.toString();
      location.route(`${location.path}${text ? `?${text}` : ''}`, true);
    },
    [location],
  );
  const close = useCallback(() => {
    const was = selected ? nodeParam(selected) : null;
    select(null);
    // Focus goes back to the node the panel was of.
    if (was) requestAnimationFrame(() => document.querySelector<SVGElement>(`[data-node-path="${was}"]`)?.focus());
  }, [select, selected]);
  useEscape(selected !== null && !escapeTaken, close);
  return { selected, select, close };
}
