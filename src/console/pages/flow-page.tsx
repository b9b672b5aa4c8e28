/*
 * /flows/:processId — one flow: its versions (which is active where), the chosen version's
 * diagram (the execution page's, without an execution) and its source. `?version=N` chooses the
 * version (default: the newest); `?node=` opens a node's panel. The version's last test coverage,
 * when one was sent, is drawn over the diagram (components/coverage-panel.tsx).
 */
import { useRoute } from 'preact-iso/router';
import { useMemo, useState } from 'preact/hooks';
import { calls } from '../../shared/api/calls/index.js';
import { CoveragePanel, coverageOverlay } from '../components/coverage-panel.js';
import { NodePanel } from '../components/node-panel.js';
import { PromoteControl } from '../components/promote-control.js';
import { Diagram } from '../diagram/diagram.js';
import { buildGraph } from '../diagram/graph-model.js';
import { useApi } from '../hooks/use-api.js';
import { useEvery } from '../hooks/use-every.js';
import { useNodeSelection } from '../hooks/use-node-selection.js';
import { useMay } from '../hooks/use-session.js';
import { useTitle } from '../hooks/use-title.js';
import { coverageModel } from '../model/coverage.js';
import { formatTime, jsonText } from '../model/format.js';
import { openedBodies, openPath, toggleOpen, type OpenState } from '../model/open-state.js';
import { locate } from './execution-view.js';

/** How often the version's test coverage is read again. */
const COVERAGE_READ_MS = 5000;

/** The flow page. */
export default function FlowPage() {
  const { params, query } = useRoute();
  const processId = params.processId ?? '';
  const version = /^[0-9]+$/.test(query.version ?? '') ? query.version! : null;
  const flow = useApi(calls.flows.get(processId, version ?? undefined));
  const mayExecute = useMay('WORKFLOW_EXECUTE');
  const mayPublish = useMay('WORKFLOW_PUBLISH');
  const { selected, select, close: closePanel } = useNodeSelection();
  const [open, setOpen] = useState<OpenState>(() => (selected ? openPath({}, selected.scope) : {}));
  const opened = useMemo(() => openedBodies(open, null, {}), [open]);
  const graph = useMemo(
    () => (flow.data ? buildGraph(flow.data.definition.nodes, null, opened) : null),
    [flow.data, opened],
  );
  useTitle(flow.data ? `${flow.data.name} v${flow.data.version}` : processId);
  // The shown version's last test coverage, read again as a test run (wfx dev --test) may send another.
  const coverage = useApi(flow.data ? calls.flows.coverage(processId, flow.data.version) : null);
  useEvery(COVERAGE_READ_MS, coverage.reload);
  const [drawCoverage, setDrawCoverage] = useState(true);
  const covered = flow.data && coverage.data?.items[0]?.version === flow.data.version ? coverage.data.items[0] : null;
  const model = useMemo(
    () => (flow.data && covered ? coverageModel(flow.data.definition.nodes, covered) : null),
    [flow.data, covered],
  );
  const overlay = useMemo(() => (model && drawCoverage ? coverageOverlay(model) : undefined), [model, drawCoverage]);

  if (flow.error && !flow.data)
    return (
      <>
        <h1>{processId}</h1>
        <p role="alert" class="error-text">{`This flow cannot be shown: ${flow.error.message}`}</p>
      </>
    );
  const f = flow.data;
  if (!f || !graph) return <p class="muted">Loading…</p>;
  const located = selected ? locate(graph, opened, null, selected) : null;
  const activeIn = (v: string) =>
    Object.entries(f.active)
      .filter(([, a]) => a === v)
      .map(([env]) => env.toLowerCase());
  return (
    <>
      <div class="page-head">
        <h1>{f.name}</h1>
        <span class="muted">{`${f.processId} · version ${f.version}`}</span>
        <a class="button-link" href={`/executions?processId=${encodeURIComponent(f.processId)}&version=${f.version}`}>
          Executions of this version
        </a>
        {mayExecute && (
          <a class="button-link" href={`/flows/${encodeURIComponent(f.processId)}/run?version=${f.version}`}>
            Run this version
          </a>
        )}
      </div>
      {f.definition.description && <p>{f.definition.description}</p>}
      <div class="execution-grid">
        <section class="diagram-pane" aria-labelledby="diagram-title">
          <h2 id="diagram-title">{`Diagram of version ${f.version}`}</h2>
          <Diagram
            graph={graph}
            hasRun={false}
            title={`${f.name} version ${f.version}`}
            selected={selected}
            onSelect={(p) => select(p)}
            onToggle={(p) => setOpen((o) => toggleOpen(o, p.scope, p.id))}
            {...(overlay && { overlay })}
          />
        </section>
        <div class="side">
          {located && (
            <NodePanel target={located.target} graph={located.graph} run={null} log={null} onClose={closePanel} />
          )}
          <CoveragePanel
            version={f.version}
            nodes={f.definition.nodes}
            view={covered}
            model={model}
            drawn={drawCoverage}
            onDrawn={setDrawCoverage}
            onSelect={(p) => {
              setOpen((o) => openPath(o, p.scope));
              select(p);
            }}
          />
          <section class="panel" aria-labelledby="versions-title">
            <h2 id="versions-title">Versions</h2>
            <ul class="versions">
              {[...f.versions].reverse().map((v) => (
                <li key={v.version}>
                  <a
                    href={`/flows/${encodeURIComponent(f.processId)}?version=${v.version}`}
                    aria-current={v.version === f.version ? 'page' : undefined}
                  >
                    {`v${v.version}`}
                  </a>{' '}
                  <span class="muted">{formatTime(v.publishedAt)}</span>
                  {activeIn(v.version).map((env) => (
                    <span key={env} class="tag">{`active in ${env}`}</span>
                  ))}
                </li>
              ))}
            </ul>
            {mayPublish && <PromoteControl processId={f.processId} active={f.active} onPromoted={flow.reload} />}
          </section>
          <section class="panel" aria-labelledby="triggers-title">
            <h2 id="triggers-title">Triggers</h2>
            {(f.definition.triggers ?? []).length === 0 ? (
              <p class="muted">None: started by hand or over the API.</p>
            ) : (
              <ul>
                {(f.definition.triggers ?? []).map((t, i) => (
                  <li key={i}>
                    <code>{t.type}</code>{' '}
                    {t.type === 'webhook'
                      ? t.webhook
                      : t.type === 'schedule'
                        ? `${t.cron}${t.timezone ? ` (${t.timezone})` : ''}`
                        : t.type === 'email'
                          ? t.connection
                          : t.type === 'execution'
                            ? `${t.processId ?? 'any other flow'} ends ${t.states.join(' or ')}`
                            : (t.description ?? '')}
                  </li>
                ))}
              </ul>
            )}
          </section>
        </div>
      </div>
      <section class="panel source" aria-labelledby="source-title">
        <h2 id="source-title">{`Source of version ${f.version}`}</h2>
        <pre class="json" tabIndex={0} aria-label={`Definition of version ${f.version}, as JSON`}>
          {jsonText(f.definition)}
        </pre>
      </section>
    </>
  );
}
