/*
 * /compare?a=ID&b=ID — two runs of one flow side by side: where their paths parted on the
 * diagram, the time each spent at each node, the variables that differ there (model/compare.ts).
 * With `a` alone (or neither) it picks the runs. Read-only: WORKFLOW_READ suffices, and the
 * daemon refuses an execution the session may not see (its error shown as it says it).
 */
import { useLocation } from 'preact-iso/router';
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { FlowDetail } from '../../shared/api/flows.js';
import type { InstanceView } from '../../shared/api/process.js';
import { calls } from '../../shared/api/calls/index.js';
import { ApiError } from '../api/http.js';
import { compareHref, ComparePicker } from '../components/compare-picker.js';
import { NodesTable, RunsFacts, VariablesDiffs } from '../components/compare-tables.js';
import { Diagram, type DiagramOverlay } from '../diagram/diagram.js';
import type { ModelEdge, Opened } from '../diagram/graph-model.js';
import { buildGraph } from '../diagram/graph-model.js';
import { useApi, type ApiRead } from '../hooks/use-api.js';
import { useLog } from '../hooks/use-log.js';
import { useNodeSelection } from '../hooks/use-node-selection.js';
import { useNow } from '../hooks/use-now.js';
import { useThrottled } from '../hooks/use-throttled.js';
import { useTitle } from '../hooks/use-title.js';
import { compareRuns, newDifferences, type Comparison, type NodeVariableDiff, type Side } from '../model/compare.js';
import { divergenceWords, nodeMark } from '../model/compare-words.js';

/** Why a run cannot be read, as the daemon said it (its code too: an execution of another organization is not found). */
function readError(which: string, id: string, error: Error): string {
  const code = error instanceof ApiError ? ` (${error.code})` : '';
  return `Execution ${which} (${id}) cannot be read: ${error.message}${code}`;
}

/** The version `run` runs, read. */
function useVersion(run: InstanceView): ApiRead<FlowDetail> {
  return useApi(calls.flows.get(run.processId, run.processVersion));
}

/** The containers opened on the compared diagram (definitions only: each run's bodies are on its own page). */
function openedOf(open: ReadonlySet<string>): Opened {
  return Object.fromEntries([...open].map((id) => [id, { run: null, opened: {} }]));
}

/** Where the paths parted, in a sentence per run. */
function DivergenceNote({ comparison }: { readonly comparison: Comparison }) {
  const d = comparison.divergence;
  if (!d) return <p>Their paths did not part: both runs reached the same nodes, left them the same way, as often.</p>;
  const words = divergenceWords(d);
  return (
    <div class="divergence">
      <p>
        {'Their paths part at '}
        <a href={`#cmp-row-${d.nodeId}`}>
          <strong>{d.name}</strong>
        </a>
        {` (${d.type}${d.name === d.nodeId ? '' : `, ${d.nodeId}`}).`}
      </p>
      <ul>
        <li>{words.a}</li>
        <li>{words.b}</li>
      </ul>
    </div>
  );
}

/** The diagram's legend: what the badges, outlines and edges say. */
const LEGEND = (
  <>
    <span class="legend-title">Runs:</span>
    <span class="legend-item">
      <span class="side-badge">A B</span> reached by both
    </span>
    <span class="legend-item">
      <span class="side-badge cmp-a">A</span> only run A (thick outline)
    </span>
    <span class="legend-item">
      <span class="side-badge cmp-b">B</span> only run B (dashed outline)
    </span>
    <span class="legend-item legend-edge cmp-edge-a">
      <svg width="28" height="10" aria-hidden="true">
        <path d="M1 5H27" />
      </svg>
      path of A only
    </span>
    <span class="legend-item legend-edge cmp-edge-b">
      <svg width="28" height="10" aria-hidden="true">
        <path d="M1 5H27" />
      </svg>
      path of B only (dashes)
    </span>
    <span class="legend-item legend-edge cmp-edge-both">
      <svg width="28" height="10" aria-hidden="true">
        <path d="M1 5H27" />
      </svg>
      path of both
    </span>
  </>
);

/** Both runs read: their versions and logs read, compared and drawn. */
function ComparisonView(props: {
  readonly a: InstanceView;
  readonly b: InstanceView;
  readonly reloadA: () => void;
  readonly reloadB: () => void;
}) {
  const { a, b } = props;
  const flowA = useVersion(a);
  const flowB = useVersion(b);
  const logA = useLog(a.processInstanceId, useThrottled(props.reloadA, 300));
  const logB = useLog(b.processInstanceId, useThrottled(props.reloadB, 300));
  const running = a.state === 'RUNNING' || b.state === 'RUNNING';
  const ticking = useNow(running);
  // Only an open visit counts up to now: with both runs over, a fixed instant keeps the comparison memoized.
  const now = running ? ticking : 0;
  const { selected, select } = useNodeSelection();
  const selectedId = selected && selected.scope.length === 0 ? selected.id : null;
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  /** Every difference at every node, or (the default) each where it first shows. */
  const [everyDifference, setEveryDifference] = useState(false);
  const comparison = useMemo(() => {
    if (!flowA.data || !flowB.data) return null;
    const entries = (log: typeof logA) =>
      log.entries.length > 0 || log.ended ? log.entries.map((e) => e.entry) : null;
    return compareRuns(
      { run: a, nodes: flowA.data.definition.nodes, log: entries(logA) },
      { run: b, nodes: flowB.data.definition.nodes, log: entries(logB) },
      now,
    );
  }, [a, b, flowA.data, flowB.data, logA, logB, now]);
  const graph = useMemo(() => {
    if (!comparison || open.size === 0) return comparison?.graph ?? null;
    // Opened bodies are drawn from A's version (B's own containers have no body to show here).
    const withBodies = buildGraph(flowA.data!.definition.nodes, null, openedOf(open));
    const bodies = new Map(withBodies.nodes.map((n) => [n.id, n.body]));
    return {
      ...comparison.graph,
      nodes: comparison.graph.nodes.map((n) => (bodies.get(n.id) ? { ...n, body: bodies.get(n.id)! } : n)),
    };
  }, [comparison, open, flowA.data]);
  const overlay = useMemo((): DiagramOverlay | undefined => {
    if (!comparison) return undefined;
    const sides = new Map<ModelEdge, Side | null>(comparison.graph.edges.map((e, i) => [e, comparison.edgeSides[i]!]));
    return {
      // The runs' bodies are not compared: their nodes and edges go unmarked.
      node: (id, scope) =>
        scope.length > 0 ? null : nodeMark(comparison.nodeSides.get(id) ?? null, comparison.divergence?.nodeId === id),
      edgeClass: (e, scope) => {
        if (scope.length > 0) return '';
        const side = sides.get(e);
        return side ? `cmp-edge-${side}` : '';
      },
      legend: LEGEND,
    };
  }, [comparison]);
  const shown = useMemo(
    (): ReadonlyMap<string, NodeVariableDiff> =>
      !comparison
        ? new Map()
        : everyDifference
          ? new Map(comparison.rows.flatMap((r) => (r.variables ? [[r.id, r.variables] as const] : [])))
          : newDifferences(comparison.rows),
    [comparison, everyDifference],
  );
  // A node chosen on the diagram: its row in the table takes the focus.
  useEffect(() => {
    if (selectedId) document.getElementById(`cmp-row-${selectedId}`)?.focus();
  }, [selectedId]);

  const failed = flowA.error ?? flowB.error;
  if (failed) return <p role="alert" class="error-text">{`A flow version cannot be read: ${failed.message}`}</p>;
  if (!comparison || !graph || !overlay) return <p class="muted">Loading the versions…</p>;
  const versions = comparison.versions;
  return (
    <>
      <RunsFacts a={a} b={b} now={now} />
      {versions.a !== versions.b && (
        <p class="notice">
          {`Run A runs version ${versions.a}, run B version ${versions.b}: compared by node id. The diagram is version ${versions.a}'s`}
          {comparison.onlyDefinedIn.b.length > 0
            ? `, with the nodes only version ${versions.b} has (${comparison.onlyDefinedIn.b.join(', ')}).`
            : '.'}
          {comparison.onlyDefinedIn.a.length > 0
            ? ` Only version ${versions.a} has ${comparison.onlyDefinedIn.a.join(', ')}.`
            : ''}
        </p>
      )}
      <section aria-labelledby="divergence-title">
        <h2 id="divergence-title">Where they diverged</h2>
        <DivergenceNote comparison={comparison} />
      </section>
      <section class="diagram-pane" aria-labelledby="diagram-title">
        <h2 id="diagram-title">Diagram</h2>
        <Diagram
          graph={graph}
          hasRun={false}
          title={`${a.processName}, run A and run B`}
          selected={selected}
          onSelect={(p) => select(p)}
          onToggle={(p) => {
            if (p.scope.length > 0) return;
            setOpen((o) => {
              const next = new Set(o);
              if (!next.delete(p.id)) next.add(p.id);
              return next;
            });
          }}
          overlay={overlay}
        />
      </section>
      <section aria-labelledby="nodes-title">
        <h2 id="nodes-title">Time at each node</h2>
        <p class="muted">In the order the runs reached them; a node visited more than once has its visits summed.</p>
        <NodesTable
          comparison={comparison}
          shown={shown}
          selected={selectedId}
          onSelect={(id) => select({ scope: [], id })}
        />
      </section>
      <section aria-labelledby="vars-title">
        <h2 id="vars-title">Variables that differ</h2>
        <p>
          <label>
            <input
              type="checkbox"
              checked={everyDifference}
              onChange={(e) => setEveryDifference(e.currentTarget.checked)}
            />{' '}
            Every difference at every node (by default, each where it first shows: an input that differs at the start,
            not again at each node after)
          </label>
        </p>
        <VariablesDiffs comparison={comparison} shown={shown} />
      </section>
    </>
  );
}

/** The comparison of `aId` with `bId`: both read first; runs of different flows are not compared. */
function CompareRuns({ aId, bId }: { readonly aId: string; readonly bId: string }) {
  const a = useApi(calls.instances.get(aId));
  const b = useApi(calls.instances.get(bId));
  const errors = [
    ...(a.error && !a.data ? [readError('A', aId, a.error)] : []),
    ...(b.error && !b.data ? [readError('B', bId, b.error)] : []),
  ];
  if (errors.length > 0)
    return (
      <>
        {errors.map((e) => (
          <p key={e} role="alert" class="error-text">
            {e}
          </p>
        ))}
        <p>
          <a href={`/compare?a=${encodeURIComponent(aId)}`}>Choose another run to compare with</a>
        </p>
      </>
    );
  if (!a.data || !b.data) return <p class="muted">Loading the runs…</p>;
  if (a.data.processId !== b.data.processId)
    return (
      <p role="alert" class="error-text">
        {`These run different flows (${a.data.processName} and ${b.data.processName}): only two runs of the same flow compare.`}
      </p>
    );
  return <ComparisonView a={a.data} b={b.data} reloadA={a.reload} reloadB={b.reload} />;
}

/** The compare page. */
export default function ComparePage() {
  const { query } = useLocation();
  const aId = query.a?.trim() || null;
  const bId = query.b?.trim() || null;
  useTitle(aId && bId ? `Compare ${aId} with ${bId}` : 'Compare two runs');
  return (
    <>
      <div class="page-head">
        <h1>Comparing two runs</h1>
        {aId && bId && (
          <>
            <a class="button-link" href={compareHref(bId, aId)}>
              Swap A and B
            </a>
            <a href={`/compare?a=${encodeURIComponent(aId)}`}>Compare A with another run</a>
          </>
        )}
      </div>
      {aId && bId ? <CompareRuns key={`${aId} ${bId}`} aId={aId} bId={bId} /> : <ComparePicker a={aId ?? bId} />}
    </>
  );
}
