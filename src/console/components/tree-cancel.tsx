/*
 * "Cancel the whole tree" on a top-level execution's page: it and everything started under it
 * (children, loop iterations, flows it called, theirs), as one bulk cancel over its `rootId`
 * (POST /process/bulk), offered while anything of the tree runs, with how many, even once the
 * execution itself ended: what stops a flow that calls itself. The operation created goes to its
 * page; from then on the daemon cancels an execution of the tree that would start another.
 */
import { useEffect, useState } from 'preact/hooks';
import type { BulkDryRun, BulkRequest, BulkView } from '../../shared/api/bulk.js';
import { api } from '../api/http.js';
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

/** The running executions of tree `rootId`: what the cancel selects. */
const request = (rootId: string): BulkRequest => ({ operation: 'cancel', query: { rootId, state: 'RUNNING' } });

/** The button, while the tree runs, and its question. */
export function TreeCancel({ rootId, processName, generation, onStarted, onError }: Props) {
  const [count, setCount] = useState<number | null>(null);
  const [asking, setAsking] = useState(false);
  useEffect(() => {
    let current = true;
    api<BulkDryRun>('/process/bulk', { method: 'POST', body: { ...request(rootId), dryRun: true, sample: 1 } }).then(
      (dry) => {
        if (current) setCount(dry.count);
      },
      // Not counted (a caller who may not run bulk operations): nothing offered.
      () => {
        if (current) setCount(null);
      },
    );
    return () => {
      current = false;
    };
  }, [rootId, generation]);
  if (count === null || count === 0) return null;
  const answer = async (yes: boolean) => {
    setAsking(false);
    if (!yes) return;
    try {
      onStarted(await api<BulkView>('/process/bulk', { method: 'POST', body: request(rootId) }));
    } catch (err) {
      onError(`Cancelling the tree failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const executions = `${count.toLocaleString('en')} running execution${count === 1 ? '' : 's'}`;
  return (
    <>
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        {`Cancel the whole tree (${count.toLocaleString('en')} running)`}
      </button>
      <ConfirmDialog
        open={asking}
        titleId="tree-cancel-title"
        title="Cancel the whole tree?"
        message={`The ${executions} of the tree of ${processName} ${rootId} (it and everything started under it) will be cancelled, and the tree will start nothing more. This cannot be undone.`}
        confirm="Cancel the whole tree"
        dismiss="Keep it running"
        onAnswer={(yes) => void answer(yes)}
      />
    </>
  );
}
