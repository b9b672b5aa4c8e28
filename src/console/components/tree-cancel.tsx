/*
 * "Cancel the whole tree" on a top-level execution's page: it and everything started under it
 * (children, loop iterations, flows it called, theirs), as one bulk cancel over its `rootId`
 * (POST /process/bulk), offered while anything of the tree runs, with how many, even once the
 * execution itself ended: what stops a flow that calls itself. The page counts with a list read
 * (a page of them at most); the question, asked on a click, with a dry run (exact, and recorded
 * in the audit trail as the bulk dialog's preview is). The operation created goes to its page;
 * from then on the daemon cancels an execution of the tree that would start another.
 */
import { useEffect, useState } from 'preact/hooks';
import type { BulkRequest, BulkView } from '../../shared/api/bulk.js';
import { calls } from '../../shared/api/calls/index.js';
import { errorMessage } from '../../shared/errors.js';
import { send } from '../api/http.js';
import { ConfirmDialog } from './confirm-dialog.js';

/** Props of TreeCancel. */
type Props = {
  /** The top-level execution whose tree it is. */
  readonly rootId: string;
  /** Its flow's name, for the question. */
  readonly processName: string;
  /** Changes when the page reads the execution again: the tree is counted again. */
  readonly generation: unknown;
  /** Called with the operation once created. */
  readonly onStarted: (view: BulkView) => void;
  /** Called with what went wrong. */
  readonly onError: (message: string) => void;
};

/** Most running executions the page counts before it says "N+". */
const COUNTED = 200;

/** The running executions of tree `rootId`: what the cancel selects. */
const request = (rootId: string): BulkRequest => ({ operation: 'cancel', query: { rootId, state: 'RUNNING' } });

/** The button, while the tree runs, and its question. */
export function TreeCancel({ rootId, processName, generation, onStarted, onError }: Props) {
  const [running, setRunning] = useState<string | null>(null);
  /** The exact count the question names, from its dry run; null: not asking. */
  const [asking, setAsking] = useState<number | null>(null);
  useEffect(() => {
    let current = true;
    send(calls.instances.search({ rootId, state: 'RUNNING', limit: COUNTED })).then(
      (page) => {
        if (!current) return;
        const n = page.items.length;
        setRunning(n === 0 ? null : `${n}${page.nextCursor === null ? '' : '+'}`);
      },
      () => {
        if (current) setRunning(null);
      },
    );
    return () => {
      current = false;
    };
  }, [rootId, generation]);
  if (running === null) return null;
  const ask = async () => {
    try {
      const dry = await send(calls.bulk.dryRun(request(rootId)));
      setAsking(dry.count);
    } catch (err) {
      onError(`Counting the tree failed: ${errorMessage(err)}`);
    }
  };
  const answer = async (yes: boolean) => {
    setAsking(null);
    if (!yes) return;
    try {
      onStarted(await send(calls.bulk.create(request(rootId))));
    } catch (err) {
      onError(`Cancelling the tree failed: ${errorMessage(err)}`);
    }
  };
  const n = asking ?? 0;
  return (
    <>
      <button type="button" class="danger" onClick={() => void ask()}>
        {`Cancel the whole tree (${running} running)`}
      </button>
      <ConfirmDialog
        open={asking !== null}
        titleId="tree-cancel-title"
        title="Cancel the whole tree?"
        message={`The ${n.toLocaleString('en')} running execution${n === 1 ? '' : 's'} of the tree of ${processName} ${rootId} (it and everything started under it) will be cancelled, and the tree will start nothing more. This cannot be undone.`}
        confirm="Cancel the whole tree"
        dismiss="Keep it running"
        onAnswer={(yes) => void answer(yes)}
      />
    </>
  );
}
