/*
 * Choosing the runs to compare: the recent executions of run A's flow (each a link to the
 * comparison), or an execution's id pasted in.
 */
import { useLocation } from 'preact-iso/router';
import { useState } from 'preact/hooks';
import type { InstanceView } from '../../shared/api/process.js';
import { calls } from '../../shared/api/calls/index.js';
import { useApi } from '../hooks/use-api.js';
import { ExecutionCells } from './execution-cells.js';

/** The comparison page of `a` with `b`. */
export function compareHref(a: string, b: string): string {
  return `/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`;
}

/** Props of ComparePicker. */
type Props = {
  /** Run A, when chosen (`?a=`); null: both are typed. */
  readonly a: string | null;
};

/** Recent executions of A's flow to compare A with, newest first, A itself left out. */
function RecentRuns({ a, run }: { readonly a: string; readonly run: InstanceView }) {
  const list = useApi(calls.instances.search({ processId: run.processId, limit: 20 }));
  const others = (list.data?.items ?? []).filter((e) => e.processInstanceId !== a);
  if (list.error)
    return <p class="error-text">{`The executions of this flow cannot be listed: ${list.error.message}`}</p>;
  if (!list.data) return <p class="muted">Loading the recent executions…</p>;
  if (others.length === 0) return <p class="muted">No other execution of this flow yet.</p>;
  const now = Date.now();
  return (
    <div class="table-scroll">
      <table class="compare-candidates">
        <caption>{`Recent executions of ${run.processName}`}</caption>
        <thead>
          <tr>
            <th scope="col">Execution</th>
            <th scope="col">Version</th>
            <th scope="col">State</th>
            <th scope="col">Started</th>
            <th scope="col">Took</th>
            <th scope="col">Correlation key, search</th>
            <th scope="col">
              <span class="visually-hidden">Compare</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {others.map((e) => (
            <tr key={e.processInstanceId}>
              <td>
                <code>{e.processInstanceId}</code>
              </td>
              <td>{e.processVersion}</td>
              <ExecutionCells e={e} now={now} />
              <td>
                <a href={compareHref(a, e.processInstanceId)} aria-label={`Compare with ${e.processInstanceId}`}>
                  Compare
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Props of IdField. */
type IdFieldProps = {
  readonly label: string;
  readonly name: string;
  /** The id as typed so far. */
  readonly value: string;
  readonly onInput: (text: string) => void;
};

/** A field to paste an execution's id in: no spelling check, no autocomplete. */
function IdField({ label, name, value, onInput }: IdFieldProps) {
  return (
    <label>
      {label}
      <input
        name={name}
        value={value}
        spellcheck={false}
        autoComplete="off"
        onInput={(e) => onInput(e.currentTarget.value)}
      />
    </label>
  );
}

/** The picker: run A's recent siblings, and a form to paste an id. */
export function ComparePicker({ a }: Props) {
  const { route } = useLocation();
  const run = useApi(a ? calls.instances.get(a) : null);
  const [typedA, setTypedA] = useState('');
  const [typedB, setTypedB] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    const first = (a ?? typedA).trim();
    const second = typedB.trim();
    if (first === '' || second === '') return setProblem('Give the id of each execution to compare.');
    if (first === second) return setProblem('That is the same execution: choose another one.');
    setProblem(null);
    route(compareHref(first, second));
  };
  return (
    <>
      {a && (
        <p>
          {'Run A: '}
          <a href={`/executions/${encodeURIComponent(a)}`}>
            <code>{a}</code>
          </a>
          {run.data ? ` (${run.data.processName}, version ${run.data.processVersion})` : ''}
        </p>
      )}
      {run.error && <p role="alert" class="error-text">{`Execution ${a} cannot be read: ${run.error.message}`}</p>}
      {a && run.data && (
        <section aria-labelledby="recent-title">
          <h2 id="recent-title">Compare with a recent execution of the same flow</h2>
          <RecentRuns a={a} run={run.data} />
        </section>
      )}
      <section aria-labelledby="paste-title">
        <h2 id="paste-title">{a ? 'Or with an execution by its id' : 'Executions to compare'}</h2>
        <form class="compare-form" onSubmit={submit}>
          {!a && <IdField label="Execution A" name="a" value={typedA} onInput={setTypedA} />}
          <IdField label={a ? 'Execution id' : 'Execution B'} name="b" value={typedB} onInput={setTypedB} />
          <button type="submit">Compare</button>
        </form>
        {problem && (
          <p role="alert" class="error-text">
            {problem}
          </p>
        )}
      </section>
    </>
  );
}
