/*
 * Moving a running execution to another published version of its flow (POST
 * /process/instance/{id}/move): a version chosen, checked first (a dry run: whether it can move,
 * or every node that cannot go on there and why), then moved.
 */
import { useState } from 'preact/hooks';
import { calls } from '../../shared/api/calls/index.js';
import type { MoveProblem } from '../../shared/api/moves.js';
import { errorMessage } from '../../shared/errors.js';
import { ApiError, send } from '../api/http.js';

/** Props of MoveForm. */
type Props = {
  readonly id: string;
  /** The version it runs. */
  readonly current: string;
  /** Every published version of its flow. */
  readonly versions: readonly string[];
  /** Called once it moved (the page reads it again). */
  readonly onMoved: () => void;
};

/** What the last check or move said. */
type Said =
  | { readonly kind: 'ok'; readonly text: string }
  | { readonly kind: 'refused'; readonly text: string; readonly problems: readonly MoveProblem[] };

/** The move form (see the top of this file). */
export function MoveForm({ id, current, versions, onMoved }: Props) {
  const others = versions.filter((v) => v !== current);
  const [version, setVersion] = useState(others.at(-1) ?? '');
  const [said, setSaid] = useState<Said | null>(null);
  if (others.length === 0) return <p class="muted">The flow has no other version to move it to.</p>;
  const ask = async (dryRun: boolean) => {
    try {
      const res = await send(calls.instances.move(id, { version, ...(dryRun && { dryRun: true }) }));
      setSaid({
        kind: 'ok',
        text: dryRun ? `It can move to version ${version}.` : `Moved to version ${res.toVersion}.`,
      });
      if (!dryRun) onMoved();
    } catch (err) {
      const problems = err instanceof ApiError ? ((err.details?.problems as MoveProblem[] | undefined) ?? []) : [];
      setSaid({ kind: 'refused', text: errorMessage(err), problems });
    }
  };
  return (
    <form class="move-form" onSubmit={(e) => e.preventDefault()}>
      <label>
        {'Version '}
        <select value={version} onChange={(e) => setVersion(e.currentTarget.value)}>
          {others.map((v) => (
            <option key={v} value={v}>{`version ${v}`}</option>
          ))}
        </select>
      </label>{' '}
      <button type="button" onClick={() => void ask(true)}>
        Check
      </button>{' '}
      <button type="button" onClick={() => void ask(false)}>
        Move
      </button>
      {said?.kind === 'ok' && <p role="status">{said.text}</p>}
      {said?.kind === 'refused' && (
        <div role="alert" class="error-text">
          <p>{said.text}</p>
          {said.problems.length > 0 && (
            <ul>
              {said.problems.map((p, i) => (
                <li key={i}>{`${p.nodeId}: ${p.code}: ${p.reason}`}</li>
              ))}
            </ul>
          )}
        </div>
      )}
    </form>
  );
}
