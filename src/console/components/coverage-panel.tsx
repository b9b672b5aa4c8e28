/*
 * A flow version's test coverage on its page: what the last test run sent (`wfx test
 * --send-coverage`, `wfx dev --test`) as counts and a list of what no case took, and the overlay
 * that draws it on the diagram.
 */
import type { FlowCoverageView } from '../../shared/api/index.js';
import type { FlowNode } from '../../shared/flow/types.js';
import type { DiagramOverlay, NodePath } from '../diagram/diagram.js';
import { formatTime } from '../model/format.js';
import { missedWords, nodePath, type CoverageModel } from '../model/coverage.js';

const LEGEND = (
  <>
    <span class="legend-title">Test coverage:</span>
    <span class="legend-item legend-node cov-reached">
      <span class="swatch" aria-hidden="true" /> reached, every branch taken
    </span>
    <span class="legend-item legend-node cov-partial">
      <span class="swatch" aria-hidden="true" /> reached, a branch not taken
    </span>
    <span class="legend-item legend-node cov-missed">
      <span class="swatch" aria-hidden="true" /> not reached (dashed)
    </span>
    <span class="legend-item legend-edge cov-edge-taken">
      <svg width="28" height="10" aria-hidden="true">
        <path d="M1 5H27" />
      </svg>
      taken
    </span>
    <span class="legend-item legend-edge cov-edge-missed">
      <svg width="28" height="10" aria-hidden="true">
        <path d="M1 5H27" />
      </svg>
      not taken (dashes)
    </span>
  </>
);

/** The diagram overlay of `model`: each node's verdict in its outline, line and accessible name; each edge taken or not. */
export function coverageOverlay(model: CoverageModel): DiagramOverlay {
  return {
    node: (id, scope) => {
      const path = nodePath(scope, id);
      const verdict = model.node(path);
      if (verdict === null) return null;
      const { taken, missed } = model.branchesOf(path);
      const total = taken.length + missed.length;
      const line =
        verdict === 'missed' ? 'not reached' : total > 0 ? `${taken.length} of ${total} branches` : 'reached';
      const words =
        verdict === 'missed'
          ? 'not reached by the tests'
          : `reached by the tests${missed.length > 0 ? `, not taken: ${missed.join(', ')}` : ''}`;
      return { badge: '', line, words, className: `cov-${verdict}` };
    },
    edgeClass: (edge, scope) => (model.edgeTaken(edge, scope) ? 'cov-edge-taken' : 'cov-edge-missed'),
    legend: LEGEND,
  };
}

/** Props of CoveragePanel. */
type Props = {
  readonly version: string;
  readonly nodes: Readonly<Record<string, FlowNode>>;
  /** The coverage kept for the version; null: none sent. */
  readonly view: FlowCoverageView | null;
  readonly model: CoverageModel | null;
  /** It is drawn on the diagram. */
  readonly drawn: boolean;
  readonly onDrawn: (drawn: boolean) => void;
  /** Opens a node the tests missed on the diagram. */
  readonly onSelect: (path: NodePath) => void;
};

/** The side panel: the last test run's coverage of the version, or how to send one. */
export function CoveragePanel({ version, nodes, view, model, drawn, onDrawn, onSelect }: Props) {
  return (
    <section class="panel coverage" aria-labelledby="coverage-title">
      <h2 id="coverage-title">Test coverage</h2>
      {view === null || model === null ? (
        <p class="muted">
          {`No test run of version ${version} has been sent. `}
          <code>wfx test --send-coverage</code> (or <code>wfx dev --test</code>) sends one, and it is drawn here.
        </p>
      ) : (
        <>
          <p>
            <strong>{`${model.percent.toFixed(1)}%`}</strong>
            {` of version ${view.version}: nodes ${model.nodes[0]}/${model.nodes[1]} reached, branches ${model.branches[0]}/${model.branches[1]} taken.`}
          </p>
          <p class="muted">
            {`${view.cases.passed} passed, ${view.cases.failed} failed, from the tests of ${view.file}, ${formatTime(view.measuredAt)}`}
          </p>
          <label>
            <input type="checkbox" checked={drawn} onChange={(e) => onDrawn(e.currentTarget.checked)} /> Draw it on the
            diagram
          </label>
          {model.missed.length === 0 ? (
            <p>Every node was reached and every branch taken.</p>
          ) : (
            <>
              <h3>Not covered</h3>
              <ul class="coverage-missed">
                {model.missed.map((item) => {
                  const path = item.node.split('/');
                  return (
                    <li key={`${item.node}|${item.part}`}>
                      <button
                        type="button"
                        class="link-button"
                        onClick={() => onSelect({ scope: path.slice(0, -1), id: path.at(-1)! })}
                      >
                        {missedWords(item, nodes)}
                      </button>
                    </li>
                  );
                })}
              </ul>
            </>
          )}
        </>
      )}
    </section>
  );
}
