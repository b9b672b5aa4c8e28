/*
 * A flow's diagram as SVG: the graph laid out (layout.ts), edges under nodes, opened containers
 * with their bodies drawn inside them. Every node and boundary event is a button (Tab to it,
 * Enter or Space opens it); a container's +/− button opens its body.
 */
import { Fragment, type ComponentChildren } from 'preact';
import { useId, useMemo } from 'preact/hooks';
import type { GraphModel, ModelEdge } from './graph-model.js';
import { DiagramNode, type NodeMark } from './diagram-node.js';
import { layoutGraph, type Layout, type Point } from './layout.js';
import { MAX_SCALE, MIN_SCALE, useZoomPan } from './zoom.js';
import { StateIcon } from '../components/state-icon.js';
import { NODE_STATE_WORDS, type NodeState } from '../model/states.js';

/** A node of the diagram wherever it stands: the containers around it (outermost first) and its id. */
export interface NodePath {
  readonly scope: readonly string[];
  readonly id: string;
}

/** Whether two node paths name the same node. Pure. */
export function samePath(a: NodePath | null, b: NodePath | null): boolean {
  return (
    a !== null &&
    b !== null &&
    a.id === b.id &&
    a.scope.length === b.scope.length &&
    a.scope.every((s, i) => s === b.scope[i])
  );
}

/**
 * What a page draws over the diagram instead of one run's states (two runs compared, a test
 * run's coverage): marks on nodes and edges, its own legend. `scope`: the containers around the
 * node or edge, outermost first ([] at the top).
 */
export interface DiagramOverlay {
  /** A node's mark; null: none. */
  readonly node: (id: string, scope: readonly string[]) => NodeMark | null;
  /** Class names added to an edge. */
  readonly edgeClass: (edge: ModelEdge, scope: readonly string[]) => string;
  readonly legend: ComponentChildren;
}

/** Props of Diagram. */
type Props = {
  readonly graph: GraphModel;
  /** The diagram shows an execution (its states), not the definition alone. */
  readonly hasRun: boolean;
  /** What the diagram is of, for its accessible name. */
  readonly title: string;
  readonly selected: NodePath | null;
  readonly onSelect: (path: NodePath) => void;
  readonly onToggle: (path: NodePath) => void;
  readonly overlay?: DiagramOverlay;
};

/** An edge's polyline smoothed through its bends. */
function edgePath(points: readonly Point[]): string {
  const [first, ...rest] = points;
  if (!first) return '';
  let d = `M${first.x} ${first.y}`;
  for (let i = 0; i < rest.length - 1; i++) {
    const p = rest[i]!;
    const q = rest[i + 1]!;
    d += `Q${p.x} ${p.y} ${(p.x + q.x) / 2} ${(p.y + q.y) / 2}`;
  }
  const last = rest.at(-1);
  return last ? `${d}L${last.x} ${last.y}` : d;
}

/** One layout (a flow's, or a body's at its offset): edges, then each node and its opened body. */
function LayoutView(props: {
  readonly layout: Layout;
  readonly offset: Point;
  readonly scope: readonly string[];
  readonly markers: string;
  readonly diagram: Props;
}) {
  const { layout, offset, scope, markers, diagram } = props;
  const overlay = diagram.overlay;
  const selectedHere =
    diagram.selected &&
    diagram.selected.scope.length === scope.length &&
    diagram.selected.scope.every((s, i) => s === scope[i])
      ? diagram.selected.id
      : null;
  return (
    <g transform={`translate(${offset.x} ${offset.y})`}>
      {layout.nodes
        .filter((n) => n.body)
        .map((n) => (
          <rect
            key={`bg-${n.node.id}`}
            class="body-bg"
            x={n.shape.x}
            y={n.shape.y}
            width={n.shape.width}
            height={n.shape.height}
            rx="10"
          />
        ))}
      <g class="edges">
        {layout.edges.map((e, i) => (
          <g
            key={i}
            class={`dedge kind-${e.edge.kind} ${e.edge.taken ? 'taken' : ''}${overlay ? ` ${overlay.edgeClass(e.edge, scope)}` : ''}`}
          >
            <path d={edgePath(e.points)} marker-end={`url(#${markers}-${e.edge.taken ? 'taken' : 'plain'})`} />
            {e.label && (
              <g class="dedge-label" transform={`translate(${e.label.x} ${e.label.y})`}>
                <title>{e.edge.label ?? ''}</title>
                <rect
                  x={-(e.label.text.length * 3.5 + 5)}
                  y="-9"
                  width={e.label.text.length * 7 + 10}
                  height="18"
                  rx="4"
                />
                <text y="4">{e.label.text}</text>
              </g>
            )}
          </g>
        ))}
      </g>
      {/* A body right after its container: the tab order goes through it before the next node. */}
      {layout.nodes.map((n) => (
        <Fragment key={n.node.id}>
          <DiagramNode
            placed={n}
            scopeKey={scope.map((s) => `${s}.`).join('')}
            hasRun={diagram.hasRun}
            mark={overlay?.node(n.node.id, scope) ?? null}
            selected={selectedHere}
            onSelect={(id) => diagram.onSelect({ scope, id })}
            onToggle={(id) => diagram.onToggle({ scope, id })}
          />
          {n.body && n.bodyOrigin && (
            <LayoutView
              layout={n.body}
              offset={n.bodyOrigin}
              scope={[...scope, n.node.id]}
              markers={markers}
              diagram={diagram}
            />
          )}
        </Fragment>
      ))}
    </g>
  );
}

/** The states in the legend, in the order a run goes through them. */
const LEGEND: readonly NodeState[] = ['active', 'waiting', 'completed', 'failed', 'cancelled', 'timedOut'];

/** The diagram of `graph`, with a legend of the states when it shows an execution. */
export function Diagram(props: Props) {
  const layout = useMemo(() => layoutGraph(props.graph), [props.graph]);
  const markers = `arrow${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  const view = useZoomPan(layout.width, layout);
  return (
    <figure class="diagram">
      <div class="diagram-tools" role="toolbar" aria-label={`Zoom the diagram of ${props.title}`}>
        <button type="button" onClick={view.zoomOut} disabled={view.scale <= MIN_SCALE} aria-label="Zoom out">
          −
        </button>
        <span class="zoom-level" aria-live="polite">{`${Math.round(view.scale * 100)}%`}</span>
        <button type="button" onClick={view.zoomIn} disabled={view.scale >= MAX_SCALE} aria-label="Zoom in">
          +
        </button>
        <button type="button" aria-pressed={view.fitted} onClick={view.fit}>
          Fit
        </button>
      </div>
      <div
        class="diagram-scroll"
        role="region"
        aria-label={`Diagram of ${props.title}: drag or arrow keys to pan, + and − to zoom, 0 to fit`}
        tabIndex={0}
        {...view.pane}
      >
        <svg
          class="diagram-svg"
          role="group"
          aria-label={`Nodes of ${props.title}`}
          width={Math.ceil(layout.width * view.scale)}
          height={Math.ceil(layout.height * view.scale)}
          viewBox={`0 0 ${Math.ceil(layout.width)} ${Math.ceil(layout.height)}`}
        >
          <defs>
            {(['plain', 'taken'] as const).map((kind) => (
              <marker
                key={kind}
                id={`${markers}-${kind}`}
                class={`arrow arrow-${kind}`}
                viewBox="0 0 10 10"
                refX="9"
                refY="5"
                markerUnits="userSpaceOnUse"
                markerWidth="9"
                markerHeight="9"
                orient="auto-start-reverse"
              >
                <path d="M0 0L10 5L0 10z" />
              </marker>
            ))}
          </defs>
          <LayoutView layout={layout} offset={{ x: 0, y: 0 }} scope={[]} markers={markers} diagram={props} />
        </svg>
      </div>
      {props.overlay && <figcaption class="legend">{props.overlay.legend}</figcaption>}
      {props.hasRun && !props.overlay && (
        <figcaption class="legend">
          <span class="legend-title">States:</span>
          {LEGEND.map((s) => (
            <span key={s} class={`legend-item state-${s}`}>
              <StateIcon icon={s} />
              {NODE_STATE_WORDS[s]}
            </span>
          ))}
          <span class="legend-item legend-taken">
            <svg width="24" height="10" aria-hidden="true">
              <path d="M1 5H23" />
            </svg>
            path taken
          </span>
        </figcaption>
      )}
    </figure>
  );
}
