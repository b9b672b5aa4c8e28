/*
 * The comparison's tables: the two runs' facts side by side, each node with the time each run
 * spent there, and the variables that differ at each node and at the end.
 */
import type { ComponentChildren } from 'preact';
import type { InstanceView } from '../../shared/api/process.js';
import type { Comparison, NodeRow, NodeVariableDiff } from '../model/compare.js';
import type { VariableChange } from '../model/compare-variables.js';
import { deltaWords, SIDE_BADGE, SIDE_WORDS, timeWords, valueWords } from '../model/compare-words.js';
import { durationBetween, formatTime } from '../model/format.js';
import { StateBadge } from './state-badge.js';

/** The two runs' facts, a column each. */
export function RunsFacts({ a, b, now }: { readonly a: InstanceView; readonly b: InstanceView; readonly now: number }) {
  const cells = (f: (r: InstanceView) => ComponentChildren) => (
    <>
      <td>{f(a)}</td>
      <td>{f(b)}</td>
    </>
  );
  return (
    <div class="table-scroll">
      <table class="compare-facts">
        <caption class="visually-hidden">The two runs</caption>
        <thead>
          <tr>
            <td />
            <th scope="col">Run A</th>
            <th scope="col">Run B</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <th scope="row">Execution</th>
            {cells((r) => (
              <a href={`/executions/${encodeURIComponent(r.processInstanceId)}`}>
                <code>{r.processInstanceId}</code>
              </a>
            ))}
          </tr>
          <tr>
            <th scope="row">Version</th>
            {cells((r) => r.processVersion)}
          </tr>
          <tr>
            <th scope="row">State</th>
            {cells((r) => (
              <StateBadge state={r.state} />
            ))}
          </tr>
          <tr>
            <th scope="row">Started</th>
            {cells((r) => (
              <time dateTime={r.startTime}>{formatTime(r.startTime)}</time>
            ))}
          </tr>
          <tr>
            <th scope="row">{a.endTime && b.endTime ? 'Took' : 'Took, or running for'}</th>
            {cells((r) => durationBetween(r.startTime, r.endTime, now))}
          </tr>
          <tr>
            <th scope="row">Correlation key</th>
            {cells((r) => r.correlationKey ?? '')}
          </tr>
          <tr>
            <th scope="row">Error</th>
            {cells((r) =>
              r.data.error ? `${r.data.error.code}${r.data.error.nodeId ? ` at ${r.data.error.nodeId}` : ''}` : '',
            )}
          </tr>
        </tbody>
      </table>
    </div>
  );
}

/** The nodes either run reached, in the order they went, with each run's time and the difference. */
export function NodesTable({
  comparison,
  shown,
  selected,
  onSelect,
}: {
  readonly comparison: Comparison;
  /** The variable differences shown per node (all, or those new there). */
  readonly shown: ReadonlyMap<string, NodeVariableDiff>;
  readonly selected: string | null;
  readonly onSelect: (id: string) => void;
}) {
  return (
    <div class="table-scroll">
      <table class="compare-nodes">
        <caption class="visually-hidden">Time spent at each node by each run</caption>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Reached by</th>
            <th scope="col">Time in A</th>
            <th scope="col">Time in B</th>
            <th scope="col">B − A</th>
            <th scope="col">Variables that differ</th>
          </tr>
        </thead>
        <tbody>
          {comparison.rows.map((r) => (
            <tr
              key={r.id}
              id={`cmp-row-${r.id}`}
              tabIndex={-1}
              class={`cmp-row cmp-${r.side} ${selected === r.id ? 'selected' : ''}`}
              aria-current={selected === r.id ? 'true' : undefined}
            >
              <th scope="row">
                <button type="button" class="link-button" onClick={() => onSelect(r.id)}>
                  {r.name}
                </button>{' '}
                <span class="muted">{r.id === r.name ? r.type : `${r.id} · ${r.type}`}</span>
                {comparison.divergence?.nodeId === r.id && <span class="tag">paths part here</span>}
              </th>
              <td>
                <span class="side-badge" aria-hidden="true">
                  {SIDE_BADGE[r.side]}
                </span>{' '}
                {SIDE_WORDS[r.side]}
              </td>
              <td>{timeWords(r.a)}</td>
              <td>{timeWords(r.b)}</td>
              <td>{deltaWords(r.deltaMs)}</td>
              <td>{variablesCell(r, shown.get(r.id))}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The names of the variables a node's differences name, once each. */
const namesOf = (d: NodeVariableDiff) => [...new Set([...(d.entry ?? []), ...(d.exit ?? [])].map((c) => c.name))];

/** The variables column of a node's row: a link to the differences shown, or why there are none. */
function variablesCell(r: NodeRow, shown: NodeVariableDiff | undefined) {
  if (r.side !== 'both') return '';
  if (r.variables === null) return <span class="muted">not known yet</span>;
  if (r.variables.entry === null && r.variables.exit === null) return <span class="muted">not kept in the logs</span>;
  const names = shown ? namesOf(shown) : [];
  if (names.length > 0) return <a href={`#cmp-vars-${r.id}`}>{names.join(', ')}</a>;
  return namesOf(r.variables).length > 0 ? <span class="muted">as before</span> : 'none';
}

/** How a variable differs, in words. */
const KIND_WORDS: Record<VariableChange['kind'], string> = {
  added: 'only in B',
  removed: 'only in A',
  changed: 'differs',
};

/** The changes of one moment (on entry, on exit, at the end) as table rows. */
function ChangeRows({ when, changes }: { readonly when: string; readonly changes: readonly VariableChange[] }) {
  return (
    <>
      {changes.map((c) => (
        <tr key={`${when}-${c.name}`}>
          <th scope="row">
            <code>{c.name}</code>
          </th>
          {when !== '' && <td>{when}</td>}
          <td>
            <code class="value">{valueWords(c.a, c.kind !== 'added')}</code>
          </td>
          <td>
            <code class="value">{valueWords(c.b, c.kind !== 'removed')}</code>
          </td>
          <td>{KIND_WORDS[c.kind]}</td>
        </tr>
      ))}
    </>
  );
}

/** A table of variable changes, with a "when" column when `moments` name several. */
function ChangesTable({
  caption,
  moments,
}: {
  readonly caption: string;
  readonly moments: readonly { readonly when: string; readonly changes: readonly VariableChange[] }[];
}) {
  const withWhen = moments.some((m) => m.when !== '');
  return (
    <div class="table-scroll">
      <table class="compare-vars">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Variable</th>
            {withWhen && <th scope="col">When</th>}
            <th scope="col">In A</th>
            <th scope="col">In B</th>
            <th scope="col">How</th>
          </tr>
        </thead>
        <tbody>
          {moments.map((m) => (
            <ChangeRows key={m.when} when={m.when} changes={m.changes} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The variables that differ at each node both runs reached (its last visit in each), then at the end. */
export function VariablesDiffs({
  comparison,
  shown,
}: {
  readonly comparison: Comparison;
  /** The differences shown per node (all, or those new there). */
  readonly shown: ReadonlyMap<string, NodeVariableDiff>;
}) {
  const differing = comparison.rows.filter((r) => {
    const d = shown.get(r.id);
    return d !== undefined && ((d.entry?.length ?? 0) > 0 || (d.exit?.length ?? 0) > 0);
  });
  const { a, b } = comparison.variablesIncomplete;
  return (
    <>
      {(a || b) && (
        <p class="notice">
          {`The log of run ${a && b ? 'A and of run B' : a ? 'A' : 'B'} stopped keeping copies of the variables (a large log): where it cannot tell, a node says so.`}
        </p>
      )}
      {differing.length === 0 ? (
        <p class="muted">No node both runs reached found or left other variables.</p>
      ) : (
        differing.map((r) => {
          const visits = (r.a?.visits ?? 0) > 1 || (r.b?.visits ?? 0) > 1 ? ' (the last visit of each)' : '';
          return (
            <section key={r.id} id={`cmp-vars-${r.id}`} class="cmp-vars" aria-labelledby={`cmp-vars-title-${r.id}`}>
              <h3 id={`cmp-vars-title-${r.id}`}>{`At ${r.name}${visits}`}</h3>
              <ChangesTable
                caption={`Variables that differ at ${r.name}`}
                moments={[
                  { when: 'on entry', changes: shown.get(r.id)!.entry ?? [] },
                  { when: 'on exit', changes: shown.get(r.id)!.exit ?? [] },
                ]}
              />
            </section>
          );
        })
      )}
      <h3>At the end</h3>
      {comparison.finalVariables.length === 0 ? (
        <p class="muted">Both runs hold the same variables now.</p>
      ) : (
        <ChangesTable
          caption="Variables that differ between the runs now"
          moments={[{ when: '', changes: comparison.finalVariables }]}
        />
      )}
    </>
  );
}
