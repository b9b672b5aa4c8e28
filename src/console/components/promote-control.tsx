/*
 * On a flow's page: promoting the version development runs to production (POST
 * /admin/flows/{processId}/promote), asked first; for a session that may publish. The daemon
 * refuses a promotion the session may not make whatever the page shows.
 */
import { useState } from 'preact/hooks';
import { calls } from '../../shared/api/calls/index.js';
import { send } from '../api/http.js';
import { useSaid } from '../hooks/use-said.js';
import { ConfirmDialog } from './confirm-dialog.js';
import { SaidNote } from './said-note.js';

/** Props of PromoteControl. */
type Props = {
  readonly processId: string;
  /** Environment -> its active version, as GET /admin/flows/{processId} gives it. */
  readonly active: Readonly<Record<string, string>>;
  /** Called once production runs the promoted version (the page reads the flow again). */
  readonly onPromoted: () => void;
};

/** The promote button (development's version differs from production's), or a line saying they run the same. */
export function PromoteControl({ processId, active, onPromoted }: Props) {
  const [asking, setAsking] = useState(false);
  const { said, attempt } = useSaid();
  const dev = active.DEVELOPMENT;
  const prod = active.PRODUCTION;
  if (dev === undefined) return <SaidNote said={said} />;
  const answer = async (yes: boolean) => {
    setAsking(false);
    if (!yes) return;
    const promote = () => send(calls.flows.promote(processId, { from: 'DEVELOPMENT', to: 'PRODUCTION' }));
    if (await attempt(promote, `Production runs version ${dev} now.`, 'The promotion failed')) onPromoted();
  };
  return (
    <div class="promote">
      {dev === prod ? (
        <p class="muted">{`Production runs version ${dev}, as development does.`}</p>
      ) : (
        <button type="button" onClick={() => setAsking(true)}>
          {`Promote version ${dev} to production`}
        </button>
      )}
      <ConfirmDialog
        open={asking}
        titleId="promote-title"
        title={`Promote version ${dev} to production?`}
        message={`New executions in production will run version ${dev}${prod === undefined ? '' : ` instead of version ${prod}`}; those running keep their version. The same version, not a new one: its number and source stay.`}
        confirm="Promote"
        tone="primary"
        dismiss="Keep production as it is"
        onAnswer={(yes) => void answer(yes)}
      />
      <SaidNote said={said} />
    </div>
  );
}
