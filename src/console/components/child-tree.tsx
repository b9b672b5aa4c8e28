/*
 * The tree of an execution's children: grouped by the node that started them (loop iterations, a
 * subProcess, an agent's tool calls), each with its state, opened a level at a time.
 */
import { useEffect, useState } from 'preact/hooks';
import type { InstanceSummary, InstanceView } from '../../shared/api/process.js';
import { calls } from '../../shared/api/calls/index.js';
import { useApi } from '../hooks/use-api.js';
import { StateBadge } from './state-badge.js';

/** Props of ChildTree. */
type Props = {
  readonly run: InstanceView;
  /** Changes when the execution was read again: the children's states are read again too. */
  readonly version: number;
};

/** The children of `parentId` as GET /process/instances lists them (its first 200), read again with each `version`. */
function useChildPage(parentId: string, version: number) {
  const read = useApi(calls.instances.search({ parentId, limit: 200 }));
  const { reload } = read;
  useEffect(() => {
    if (version > 0) reload();
  }, [version, reload]);
  return read;
}

/** One child: its link, its state, and its own children when opened. */
function ChildItem({
  id,
  label,
  summary,
  version,
}: {
  id: string;
  label: string;
  summary?: InstanceSummary;
  version: number;
}) {
  const [open, setOpen] = useState(false);
  const grandchildren = summary?.childCount ?? 0;
  return (
    <li>
      <a href={`/executions/${encodeURIComponent(id)}`}>{label}</a> {summary && <StateBadge state={summary.state} />}
      {grandchildren > 0 && (
        <>
          {' '}
          <button
            type="button"
            class="link-button"
            aria-expanded={open}
            onClick={() => setOpen(!open)}
          >{`${open ? 'Hide' : 'Show'} its ${grandchildren} child execution${grandchildren === 1 ? '' : 's'}`}</button>
          {open && <ChildList parentId={id} version={version} />}
        </>
      )}
    </li>
  );
}

/** The children of `parentId` as the list API gives them (a level under an opened child). */
function ChildList({ parentId, version }: { parentId: string; version: number }) {
  const read = useChildPage(parentId, version);
  if (read.error) return <p class="muted">The child executions could not be read.</p>;
  if (!read.data) return <p class="muted">Loading…</p>;
  return (
    <ul class="child-list">
      {read.data.items.map((e) => (
        <ChildItem
          key={e.processInstanceId}
          id={e.processInstanceId}
          label={`${e.processName} ${e.processInstanceId}`}
          summary={e}
          version={version}
        />
      ))}
    </ul>
  );
}

/** The words for a child: the iteration of a loop, the tool of an agent, or the subprocess. */
function childLabel(run: InstanceView, nodeType: string, nodeInstanceId: string, id: string, index: number): string {
  if (nodeType === 'loopNode') return `iteration ${index + 1}: ${id}`;
  if (nodeType === 'callAgent') {
    const ni = run.nodes.find((n) => n.nodeInstanceId === nodeInstanceId);
    const call = ni?.agent?.calls.find((c) => c.childInstanceId === id);
    return call ? `tool ${call.name}: ${id}` : id;
  }
  return id;
}

/** The children of `run`, by the node that started them. */
export function ChildTree({ run, version }: Props) {
  const page = useChildPage(run.processInstanceId, version);
  // Without the list (an older daemon), the children are shown without their states.
  const states = new Map((page.data?.items ?? []).map((e) => [e.processInstanceId, e]));
  const starters = run.nodes.filter((n) => (n.childInstanceIds?.length ?? 0) > 0);
  if (starters.length === 0) return <p class="muted">No child executions.</p>;
  return (
    <ul class="child-tree">
      {starters.map((n) => (
        <li key={n.nodeInstanceId}>
          <span class="child-group">{`${n.nodeName} (${n.nodeType})`}</span>
          <ul class="child-list">
            {(n.childInstanceIds ?? []).map((id, i) => (
              <ChildItem
                key={id}
                id={id}
                label={childLabel(run, n.nodeType, n.nodeInstanceId, id, i)}
                summary={states.get(id)}
                version={version}
              />
            ))}
          </ul>
        </li>
      ))}
    </ul>
  );
}
