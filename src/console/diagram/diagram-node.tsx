/* One node of the diagram, drawn at its place: its shape, name, state icon and state line. */
import type { TargetedKeyboardEvent } from 'preact';
import { StateIcon } from '../components/state-icon.js';
import type { ModelNode } from './graph-model.js';
import { clip, NAME_CHARS, SIZES, type PlacedNode } from './layout.js';
import { boundaryLabel, nodeLabel, openedLine, stateLine } from './node-words.js';

/** What a page marks a node with (diagram.tsx, DiagramOverlay): a badge, the line under its name, words for its accessible name. */
export interface NodeMark {
  /** A few characters in a badge at its corner (`A`, `B`, `A B`). */
  readonly badge: string;
  /** Shown under a box's name instead of its state line; above a circle or a diamond. */
  readonly line: string;
  /** Added to its accessible name. */
  readonly words: string;
  /** Class names added to the node. */
  readonly className: string;
}

/** Props of DiagramNode. */
type Props = {
  readonly placed: PlacedNode;
  /** The ids of the containers around it, each followed by a dot (`each.`; '' at the top). */
  readonly scopeKey: string;
  /** The diagram shows an execution (a node without instances was not reached). */
  readonly hasRun: boolean;
  /** A page's mark on it; null: none. */
  readonly mark?: NodeMark | null;
  /** The node (or one of its boundary events) is the one opened in the panel: its id. */
  readonly selected: string | null;
  /** Opens the panel of a node or boundary event (by id). */
  readonly onSelect: (id: string) => void;
  /** Opens or closes a container's body. */
  readonly onToggle: (id: string) => void;
};

/*
 * `tabindex`, not `tabIndex`: Preact sets an SVG element's props as attributes, and an SVG
 * attribute's name is case-sensitive (`tabIndex` makes nothing focusable).
 */

/**
 * The props that make an SVG group a button that calls `fn` (a node, its body's toggle, a
 * boundary event): focusable, called by a click or by Enter and Space, and the event stops
 * there, so that no element around it takes it too.
 */
function asButton(fn: () => void) {
  return {
    tabindex: 0,
    role: 'button',
    onClick: (e: MouseEvent) => {
      e.stopPropagation();
      fn();
    },
    onKeyDown: (e: TargetedKeyboardEvent<SVGElement>) => {
      if (e.key !== 'Enter' && e.key !== ' ') return;
      e.preventDefault();
      e.stopPropagation();
      fn();
    },
  } as const;
}

/** The event circle: thin for a start, thick for an end, double for one in between. */
function EventShape({ node, r }: { readonly node: ModelNode; readonly r: number }) {
  const kind = node.type === 'startEvent' ? 'start' : node.type === 'endEvent' ? 'end' : 'between';
  return (
    <g class={`event-${kind}`}>
      <circle class="shape" r={r} />
      {kind === 'between' && <circle class="shape-inner" r={r - 4} />}
    </g>
  );
}

/** The diamond with its marker: × exclusive, + parallel, ○ inclusive, ? ifElse. */
function GatewayShape({ node, h }: { readonly node: ModelNode; readonly h: number }) {
  const m = h * 0.22;
  return (
    <g>
      <path class="shape" d={`M0 ${-h}L${h} 0L0 ${h}L${-h} 0Z`} />
      {node.type === 'exclusiveGateway' && <path class="marker" d={`M${-m} ${-m}L${m} ${m}M${m} ${-m}L${-m} ${m}`} />}
      {node.type === 'parallelGateway' && (
        <path class="marker" d={`M0 ${-m * 1.3}V${m * 1.3}M${-m * 1.3} 0H${m * 1.3}`} />
      )}
      {node.type === 'inclusiveGateway' && <circle class="marker" r={m * 1.2} />}
      {node.type === 'ifElse' && (
        <text class="marker-text" y="5">
          ?
        </text>
      )}
    </g>
  );
}

/** The state icon in a small disc at (x, y). */
function StateMark({ node, x, y }: { readonly node: ModelNode; readonly x: number; readonly y: number }) {
  if (node.state === null) return null;
  return (
    <g class={`state-mark state-${node.state}`} transform={`translate(${x - 9} ${y - 9})`}>
      <circle class="state-disc" cx="9" cy="9" r="9" />
      <g transform="translate(2 2)">
        <StateIcon icon={node.state} size={14} />
      </g>
    </g>
  );
}

/*
 * A badge's letters are drawn as strokes, not text: the node's accessible name says what the
 * badge means in words, and drawn text would have to be repeated in it (WCAG's label in name).
 */
const GLYPHS: Readonly<Record<string, string>> = {
  A: 'M0 10L4 0L8 10M1.6 6H6.4',
  B: 'M0 0V10H4.6C7.8 10 7.8 5 4.6 5H0M0 0H4.2C6.8 0 6.8 5 4.2 5',
};

/** A mark's badge centred at (x, y): its letters (A, B) in a pill. */
function MarkBadge({ text, x, y }: { readonly text: string; readonly x: number; readonly y: number }) {
  const letters = [...text].filter((c) => GLYPHS[c] !== undefined);
  if (letters.length === 0) return null;
  const w = letters.length * 11 + 9;
  return (
    <g class="mark-badge" aria-hidden="true" transform={`translate(${x - w / 2} ${y - 9})`}>
      <rect width={w} height="18" rx="9" />
      {letters.map((c, i) => (
        <path key={i} class="glyph" transform={`translate(${6 + i * 11} 4)`} d={GLYPHS[c]} />
      ))}
    </g>
  );
}

/**
 * A node's accessible name with a page's mark: what it shows first (name, then the mark's line;
 * an opened container, its title line), then its type and the mark's words.
 */
function markedLabel(node: ModelNode, mark: NodeMark, open: boolean): string {
  const shown = open ? [node.name, openedLine(node)] : mark.line === '' ? [node.name] : [node.name, mark.line];
  const line = open && mark.line !== '' ? [mark.line] : [];
  return [...shown, node.type, ...line, mark.words, ...node.boundaries.map((b) => boundaryLabel(b, false))].join(', ');
}

/** A node of the diagram and its boundary events. */
export function DiagramNode({ placed, scopeKey, hasRun, mark = null, selected, onSelect, onToggle }: Props) {
  const { node, shape } = placed;
  const cx = shape.x + shape.width / 2;
  const cy = shape.y + shape.height / 2;
  const hw = shape.width / 2;
  const hh = shape.height / 2;
  const name = clip(node.name, NAME_CHARS[node.shape]);
  const classes = [
    'dnode',
    `shape-${node.shape}`,
    `state-${node.state ?? 'none'}`,
    node.instances.length > 0 ? 'visited' : '',
    selected === node.id ? 'selected' : '',
    placed.body ? 'open' : '',
    mark?.className ?? '',
  ].join(' ');
  const round = node.shape === 'event' || node.shape === 'gateway';
  // A closed container's words sit left of its +/− button.
  const dx = node.shape === 'container' ? -14 : 0;
  return (
    <>
      <g
        class={classes}
        transform={`translate(${cx} ${cy})`}
        {...asButton(() => onSelect(node.id))}
        aria-label={
          mark ? markedLabel(node, mark, placed.body !== null) : nodeLabel(node, hasRun, placed.body !== null)
        }
        aria-pressed={selected === node.id}
        data-node-path={`${scopeKey}${node.id}`}
      >
        <title>{`${node.name} (${node.type})`}</title>
        {node.shape === 'event' && <EventShape node={node} r={hw} />}
        {node.shape === 'gateway' && <GatewayShape node={node} h={hw} />}
        {!round && <rect class="shape" x={-hw} y={-hh} width={shape.width} height={shape.height} rx="8" />}
        {round ? (
          <>
            <circle class="focus-ring" r={hw + 5} />
            {/* A mark's line above the shape, in the same text: read (and checked against the accessible name) as "name line". */}
            <text class="label" y={hh + 14}>
              {node.instances.length > 1 ? `${name} ×${node.instances.length}` : name}
              {mark && mark.line !== '' && (
                <>
                  {' '}
                  <tspan class="mark-line" x="0" y={-hh - 8}>
                    {mark.line}
                  </tspan>
                </>
              )}
            </text>
            <StateMark node={node} x={hw * 0.75} y={-hh * 0.75} />
            {mark && <MarkBadge text={mark.badge} x={hw + 4} y={-hh * 0.6} />}
          </>
        ) : (
          <>
            <rect
              class="focus-ring"
              x={-hw - 4}
              y={-hh - 4}
              width={shape.width + 8}
              height={shape.height + 8}
              rx="11"
            />
            {placed.body ? (
              <text class="title" x={-hw + 12} y={-hh + 21}>
                {name}
                <tspan class="subtitle">{`  ${openedLine(node)}`}</tspan>
              </text>
            ) : (
              // One text, two lines: read (and checked against the accessible name) as "name line".
              <text class="name" x={dx} y={node.shape === 'container' ? -6 : -4}>
                {name}{' '}
                <tspan class="subtitle" x={dx} y={node.shape === 'container' ? 12 : 14}>
                  {clip(mark?.line ?? stateLine(node), 30)}
                </tspan>
              </text>
            )}
            <StateMark node={node} x={hw - 4} y={-hh + 4} />
            {mark && (
              <MarkBadge text={mark.badge} x={hw - 10 - mark.badge.replace(/ /g, '').length * 5.5} y={-hh + 2} />
            )}
          </>
        )}
      </g>
      {node.container && (
        <g
          class="dtoggle"
          transform={`translate(${cx + hw - 36} ${cy - hh + 8})`}
          {...asButton(() => onToggle(node.id))}
          aria-expanded={placed.body !== null}
          aria-label={`${placed.body ? 'Close' : 'Open'} the body of ${node.name}`}
        >
          <title>{placed.body ? 'Close the body' : 'Open the body'}</title>
          <rect x="0" y="0" width="18" height="18" rx="4" />
          <path d={placed.body ? 'M5 9h8' : 'M5 9h8M9 5v8'} />
        </g>
      )}
      {placed.boundaries.map(({ boundary, cx: bx, cy: by }) => (
        <g
          key={boundary.id}
          class={`dboundary state-${boundary.state ?? 'none'} ${boundary.fired ? 'fired' : ''} ${selected === boundary.id ? 'selected' : ''}`}
          transform={`translate(${bx} ${by})`}
          {...asButton(() => onSelect(boundary.id))}
          aria-label={boundaryLabel(boundary, hasRun)}
          aria-pressed={selected === boundary.id}
          data-node-path={`${scopeKey}${boundary.id}`}
        >
          <title>{`${boundary.name} (${boundary.event} boundary event${boundary.fired ? ', fired' : ''})`}</title>
          <circle class="focus-ring" r={SIZES.boundaryRadius + 4} />
          <circle class="shape" r={SIZES.boundaryRadius} />
          <circle class="shape-inner" r={SIZES.boundaryRadius - 3} />
          {boundary.event === 'timer' ? (
            <path class="glyph" d="M0 -4.5V0l3 2" />
          ) : (
            <path class="glyph" d="M-3.5 3.5L-1 -3.5L1 1L3.5 -3.5" />
          )}
        </g>
      ))}
    </>
  );
}
