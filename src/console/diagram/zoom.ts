/*
 * How large a diagram is drawn, and panning it: fitted to its pane's width by default, never so
 * small that its labels (12px at scale 1) fall under 11px, past which it scrolls; zoomed with
 * buttons or + − 0 on the focused pane; panned by dragging its background or with the arrow
 * keys (the pane scrolls). The node that is at work (active, waiting, failed) is brought into
 * view when the diagram is first drawn.
 */
import type { TargetedKeyboardEvent, TargetedPointerEvent } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** The smallest scale: a 12px label is 11px then. */
export const MIN_SCALE = 11 / 12;
/** The largest scale. */
export const MAX_SCALE = 2.5;
const STEP = 1.25;

/** The scale `zoom` (a number, or `fit`: the pane's width, between MIN_SCALE and 1) gives a diagram `width` wide in a pane `pane` wide (null: not measured yet). Pure. */
export function scaleOf(zoom: number | 'fit', width: number, pane: number | null): number {
  if (zoom !== 'fit') return zoom;
  if (pane === null || width <= 0) return 1;
  return Math.min(1, Math.max(MIN_SCALE, pane / width));
}

/** What a diagram's pane needs to zoom and pan. */
export interface ZoomPan {
  readonly scale: number;
  readonly fitted: boolean;
  readonly zoomIn: () => void;
  readonly zoomOut: () => void;
  readonly fit: () => void;
  /** The scrolling pane's ref and handlers. */
  readonly pane: {
    readonly ref: { current: HTMLDivElement | null };
    readonly onKeyDown: (e: TargetedKeyboardEvent<HTMLDivElement>) => void;
    readonly onPointerDown: (e: TargetedPointerEvent<HTMLDivElement>) => void;
    readonly onPointerMove: (e: TargetedPointerEvent<HTMLDivElement>) => void;
    readonly onPointerUp: (e: TargetedPointerEvent<HTMLDivElement>) => void;
  };
}

/** Zoom and pan for a diagram `width` wide; `layoutKey` changes when the diagram is drawn anew. */
export function useZoomPan(width: number, layoutKey: unknown): ZoomPan {
  const ref = useRef<HTMLDivElement | null>(null);
  const [zoom, setZoom] = useState<number | 'fit'>('fit');
  const [pane, setPane] = useState<number | null>(null);
  const drag = useRef<{ x: number; y: number; left: number; top: number; id: number } | null>(null);
  const centred = useRef(false);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setPane(el.clientWidth);
    measure();
    const seen = new ResizeObserver(measure);
    seen.observe(el);
    return () => seen.disconnect();
  }, []);
  const scale = scaleOf(zoom, width, pane);
  // The node at work in view, once, when the diagram is first drawn at its size.
  useEffect(() => {
    const el = ref.current;
    if (!el || pane === null || centred.current) return;
    centred.current = true;
    const node = el.querySelector<SVGGElement>('.dnode.state-failed, .dnode.state-waiting, .dnode.state-active');
    if (!node) return;
    const box = node.getBoundingClientRect();
    const view = el.getBoundingClientRect();
    if (box.right > view.right || box.left < view.left)
      el.scrollLeft += box.left + box.width / 2 - (view.left + view.width / 2);
    if (box.bottom > view.bottom || box.top < view.top)
      el.scrollTop += box.top + box.height / 2 - (view.top + view.height / 2);
  }, [pane, layoutKey]);
  const zoomBy = (f: number) => setZoom(Math.min(MAX_SCALE, Math.max(MIN_SCALE, scale * f)));
  return {
    scale,
    fitted: zoom === 'fit',
    zoomIn: () => zoomBy(STEP),
    zoomOut: () => zoomBy(1 / STEP),
    fit: () => setZoom('fit'),
    pane: {
      ref,
      onKeyDown: (e) => {
        if (e.target !== e.currentTarget) return; // a node's own keys
        if (e.key === '+' || e.key === '=') zoomBy(STEP);
        else if (e.key === '-') zoomBy(1 / STEP);
        else if (e.key === '0') setZoom('fit');
        else return;
        e.preventDefault();
      },
      onPointerDown: (e) => {
        // A node or its button takes its own clicks: only the background pans.
        if (e.button !== 0 || (e.target as Element).closest('.dnode, .dtoggle, .dboundary')) return;
        const el = e.currentTarget;
        drag.current = { x: e.clientX, y: e.clientY, left: el.scrollLeft, top: el.scrollTop, id: e.pointerId };
        el.setPointerCapture(e.pointerId);
        el.classList.add('panning');
      },
      onPointerMove: (e) => {
        const d = drag.current;
        if (!d || d.id !== e.pointerId) return;
        e.currentTarget.scrollLeft = d.left - (e.clientX - d.x);
        e.currentTarget.scrollTop = d.top - (e.clientY - d.y);
      },
      onPointerUp: (e) => {
        if (drag.current?.id !== e.pointerId) return;
        drag.current = null;
        e.currentTarget.classList.remove('panning');
      },
    },
  };
}
