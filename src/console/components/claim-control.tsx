/*
 * A task's claim, said and changed: who claimed it (you, another person, nobody), and Claim or
 * Unclaim for a session that may answer it. Claimed by another, the daemon refuses the others'
 * answers (TASK_CLAIMED); taking it over is the CLI's and the API's (`takeOver`).
 */
import { useState } from 'preact/hooks';
import { calls } from '../../shared/api/calls/index.js';
import { asError, send } from '../api/http.js';
import { claimWords } from '../model/claim.js';

/** Props of ClaimControl. */
type Props = {
  readonly processInstanceId: string;
  readonly nodeId: string;
  /** Who claimed it (`key:<id>`, `oidc:<subject>`); null: nobody. */
  readonly claimedBy: string | null;
  /** The claimer's name as the tasks list gives it, when known. */
  readonly claimedByName?: string;
  /** The session, as the daemon names callers; null before it is read. */
  readonly me: string | null;
  readonly mayExecute: boolean;
  /** Told once the claim changed (reads the task again). */
  readonly onChanged: () => void;
};

/** The claim (see the top of this file). */
export function ClaimControl({
  processInstanceId,
  nodeId,
  claimedBy,
  claimedByName,
  me,
  mayExecute,
  onChanged,
}: Props) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const change = async (action: 'CLAIM' | 'UNCLAIM') => {
    setBusy(true);
    setProblem(null);
    try {
      await send(calls.tasks.answer({ processInstanceId, nodeId, action }));
      onChanged();
    } catch (err) {
      setProblem(asError(err).message);
    } finally {
      setBusy(false);
    }
  };
  const mine = claimedBy !== null && claimedBy === me;
  return (
    <span class="claim">
      <span class={claimedBy !== null && !mine ? 'tag wait-person' : undefined}>
        {claimWords(claimedBy, me, claimedByName)}
      </span>
      {mayExecute && claimedBy === null && (
        <button type="button" disabled={busy} onClick={() => void change('CLAIM')}>
          Claim
        </button>
      )}
      {mayExecute && mine && (
        <button type="button" disabled={busy} onClick={() => void change('UNCLAIM')}>
          Unclaim
        </button>
      )}
      {problem !== null && (
        <span role="alert" class="error-text">
          {` ${problem}`}
        </span>
      )}
    </span>
  );
}
