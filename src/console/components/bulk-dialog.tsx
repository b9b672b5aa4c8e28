/*
 * A bulk action over the executions the list's filters select (POST /process/bulk): the
 * operation chosen with its parameters, a dry run first (how many, and the first ten), then
 * applied on a confirmation; the operation created goes to its page.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  BULK_OPERATION_NAMES,
  type BulkDryRun,
  type BulkOperationName,
  type BulkQuery,
  type BulkView,
} from '../../shared/api/bulk.js';
import { calls } from '../../shared/api/calls/index.js';
import { errorMessage } from '../../shared/errors.js';
import { send as sendCall } from '../api/http.js';
import { bulkBody, OPERATIONS, type BulkChoice } from '../model/bulk.js';
import { StateBadge } from './state-badge.js';

/** Props of BulkDialog. */
type Props = {
  readonly open: boolean;
  /** The selection: the list's filters. */
  readonly query: BulkQuery;
  /** The selection in words (the filters), or that it is every execution. */
  readonly selection: string;
  /** The versions of the flow the filters name, for a move; absent: typed. */
  readonly versions?: readonly string[];
  readonly onClose: () => void;
  /** Called with the operation once created. */
  readonly onStarted: (view: BulkView) => void;
};

/** The bulk action dialog. */
export function BulkDialog({ open, query, selection, versions, onClose, onStarted }: Props) {
  const ref = useRef<HTMLDialogElement>(null);
  const [choice, setChoice] = useState<BulkChoice>({ operation: 'cancel', dataText: '', version: '' });
  const [preview, setPreview] = useState<BulkDryRun | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      setPreview(null);
      setProblem(null);
      d.showModal();
    }
    if (!open && d.open) d.close();
  }, [open]);
  const change = (c: Partial<BulkChoice>) => {
    setChoice({ ...choice, ...c });
    setPreview(null);
    setProblem(null);
  };
  const send = async (dryRun: boolean) => {
    // Applied after a preview: to what it counted, not to executions started since.
    const body = bulkBody(
      choice,
      dryRun || !preview ? query : { ...query, startedBefore: preview.startedBefore },
      dryRun,
    );
    if (!body.ok) {
      setProblem(body.message);
      return;
    }
    setBusy(true);
    setProblem(null);
    try {
      if (dryRun) {
        setPreview(await sendCall(calls.bulk.dryRun(body.body)));
        heading.current?.focus();
      } else onStarted(await sendCall(calls.bulk.create(body.body)));
    } catch (err) {
      setProblem(`${dryRun ? 'The preview' : 'The operation'} was refused: ${errorMessage(err)}`);
    } finally {
      setBusy(false);
    }
  };
  const verb = OPERATIONS[choice.operation].verb;
  const tooMany = preview !== null && preview.count > preview.maxExecutions;
  return (
    <dialog ref={ref} class="dialog bulk-dialog" aria-labelledby="bulk-title" onCancel={onClose}>
      <h2 id="bulk-title">Bulk action</h2>
      <p>{`On ${selection}.`}</p>
      <form class="bulk-form" onSubmit={(e) => e.preventDefault()}>
        <label for="bulk-operation">Action</label>
        <select
          id="bulk-operation"
          value={choice.operation}
          onChange={(e) => change({ operation: e.currentTarget.value as BulkOperationName })}
        >
          {BULK_OPERATION_NAMES.map((op) => (
            <option key={op} value={op}>
              {OPERATIONS[op].label}
            </option>
          ))}
        </select>
        {(choice.operation === 'retry' || choice.operation === 'replay') && (
          <>
            <label for="bulk-data">
              {choice.operation === 'retry' ? 'Variables to set first' : 'Variables over the start variables'}
            </label>
            <textarea
              id="bulk-data"
              rows={3}
              spellcheck={false}
              placeholder='{"token": "new"}'
              value={choice.dataText}
              onInput={(e) => change({ dataText: e.currentTarget.value })}
              aria-describedby="bulk-data-hint"
            />
            <p id="bulk-data-hint" class="hint muted">
              Optional: a JSON object, set in each execution.
            </p>
          </>
        )}
        {choice.operation === 'move' &&
          (versions && versions.length > 0 ? (
            <>
              <label for="bulk-version">Version to move to</label>
              <select
                id="bulk-version"
                value={choice.version}
                onChange={(e) => change({ version: e.currentTarget.value })}
              >
                <option value="">Choose…</option>
                {versions.map((v) => (
                  <option key={v} value={v}>{`version ${v}`}</option>
                ))}
              </select>
            </>
          ) : (
            <>
              <label for="bulk-version">Version to move to</label>
              <input
                id="bulk-version"
                type="text"
                inputMode="numeric"
                value={choice.version}
                onInput={(e) => change({ version: e.currentTarget.value })}
              />
            </>
          ))}
      </form>
      {problem && (
        <p role="alert" class="error-text">
          {problem}
        </p>
      )}
      {preview && (
        <section class="bulk-preview" aria-labelledby="bulk-preview-title">
          <h3 id="bulk-preview-title" tabIndex={-1} ref={heading}>
            {`${verb} ${preview.count} execution${preview.count === 1 ? '' : 's'}?`}
          </h3>
          {tooMany ? (
            <p class="error-text">{`More than ${preview.maxExecutions} executions: narrow the filters first.`}</p>
          ) : (
            <p>
              {preview.count === 0
                ? 'The filters select no execution.'
                : `Nothing has changed yet. ${preview.sample.length < preview.count ? `The first ${preview.sample.length}:` : 'They are:'}`}
            </p>
          )}
          {preview.sample.length > 0 && (
            <table class="bulk-sample">
              <caption class="visually-hidden">A sample of the selected executions</caption>
              <thead>
                <tr>
                  <th scope="col">Execution</th>
                  <th scope="col">Flow</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                {preview.sample.map((e) => (
                  <tr key={e.processInstanceId}>
                    <td>
                      <a href={`/executions/${encodeURIComponent(e.processInstanceId)}`}>{e.processInstanceId}</a>
                    </td>
                    <td>{`${e.processName} v${e.processVersion}`}</td>
                    <td>
                      <StateBadge state={e.state} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {preview.refusedCount !== undefined && preview.refusedCount > 0 && (
            <p class="notice">{`${preview.refusedCount} of them cannot move now and will be skipped.`}</p>
          )}
        </section>
      )}
      <div class="dialog-buttons">
        <button type="button" onClick={onClose}>
          Close
        </button>
        {!preview || preview.count === 0 || tooMany ? (
          <button type="button" class="primary" disabled={busy} onClick={() => void send(true)}>
            Preview
          </button>
        ) : (
          <button type="button" class="danger" disabled={busy} onClick={() => void send(false)}>
            {`${verb} ${preview.count} execution${preview.count === 1 ? '' : 's'}`}
          </button>
        )}
      </div>
    </dialog>
  );
}
