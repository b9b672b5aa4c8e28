/*
 * A waiting task's form (POST /process/task): a control per field of the node's definition,
 * checked in the page with the daemon's own check before it is sent, the daemon's refusal shown
 * next to each field, files uploaded when chosen (the daemon's size limit checked first),
 * COMPLETE, and CANCEL after a confirmation. An answer that lost a race (the task was answered
 * elsewhere, its timer fired, the execution ended) says so and links to the execution.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { formatBytes } from '../../shared/bytes.js';
import type { InputSpec } from '../../shared/input-data.js';
import type { ApprovalView } from '../../shared/api/index.js';
import { calls } from '../../shared/api/calls/index.js';
import { errorMessage } from '../../shared/errors.js';
import { ApiError, send as sendCall } from '../api/http.js';
import { uploadFile } from '../api/upload.js';
import { useApi } from '../hooks/use-api.js';
import {
  answerData,
  controlsOf,
  initialValues,
  problemsByField,
  refusalByField,
  type ControlValue,
  type FormValues,
} from '../model/task-form.js';
import { ConfirmDialog } from './confirm-dialog.js';
import { TaskField, type UploadState } from './task-field.js';

/** The codes of an answer that came too late: the task no longer waits. */
const TOO_LATE = new Set(['NODE_NOT_WAITING', 'INSTANCE_NOT_RUNNING', 'INSTANCE_NOT_FOUND']);

/** Props of TaskForm. */
type Props = {
  readonly processInstanceId: string;
  /** The execution's organization: a file is uploaded into its store (a system session acts in any). */
  readonly organization: string;
  readonly nodeId: string;
  readonly nodeName: string;
  /** What the node waits for (its wait, or the task list's item). */
  readonly spec: InputSpec & { readonly formTitle: string | null; readonly approval?: ApprovalView };
  /** The session may answer (WORKFLOW_EXECUTE): the buttons are shown. */
  readonly mayExecute: boolean;
  /** Another person claimed the task (their name): the buttons are not shown, and it says why. */
  readonly claimedByOther?: string;
  /** Prefix of its elements' ids, unique on the page. */
  readonly idBase: string;
  /** Called once the daemon took the answer. */
  readonly onAnswered?: (action: 'COMPLETE' | 'CANCEL') => void;
};

/** What the last answer came to. */
type Outcome =
  | { readonly kind: 'done'; readonly action: 'COMPLETE' | 'CANCEL' }
  | { readonly kind: 'late'; readonly code: string }
  | { readonly kind: 'error'; readonly message: string };

/** The form (see the top of this file). */
export function TaskForm({
  processInstanceId,
  organization,
  nodeId,
  nodeName,
  spec,
  mayExecute,
  claimedByOther,
  idBase,
  onAnswered,
}: Props) {
  // A page that reads the execution again gives an equal spec anew: what is typed stays.
  const specKey = JSON.stringify([spec.inputType, spec.options, spec.fields]);
  const controls = useMemo(() => controlsOf(spec), [specKey]);
  const [values, setValues] = useState<FormValues>(() => initialValues(controls));
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [uploads, setUploads] = useState<Record<string, UploadState | null>>({});
  const [sending, setSending] = useState(false);
  const [asking, setAsking] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const limits = useApi(controls.some((c) => c.kind === 'file') ? calls.files.limits() : null);
  const form = useRef<HTMLFormElement>(null);
  const uploading = Object.values(uploads).some((u) => u?.kind === 'sending');
  // One upload per field: a file chosen while another uploads replaces it; another task, or
  // leaving the form, stops them all.
  const running = useRef<Record<string, AbortController>>({});
  const stopUploads = () => {
    for (const c of Object.values(running.current)) c.abort();
    running.current = {};
  };
  useEffect(() => stopUploads, []);
  // Before the browser paints: after it, what is typed into the new form would be wiped.
  useLayoutEffect(() => {
    stopUploads();
    setUploads({});
    setValues(initialValues(controls));
    setProblems({});
    setOutcome(null);
  }, [processInstanceId, nodeId, controls]);

  const set = (key: string, value: ControlValue) => {
    setValues((v) => ({ ...v, [key]: value }));
    setProblems(({ [key]: _gone, ...rest }) => rest);
  };
  /** After a refusal, the first field with a problem takes the focus. */
  const focusFirst = (found: Record<string, string>) => {
    const first = controls.find((c) => found[c.key] !== undefined);
    if (!first) return;
    requestAnimationFrame(() => {
      const el = form.current?.querySelector<HTMLElement>(`#${CSS.escape(`${idBase}-${first.key}`)}`);
      (el ?? form.current?.querySelector<HTMLElement>(`[name="${CSS.escape(`${idBase}-${first.key}`)}"]`))?.focus();
    });
  };
  const chooseFile = async (key: string, file: File | null) => {
    running.current[key]?.abort();
    delete running.current[key];
    set(key, null);
    setUploads((u) => ({ ...u, [key]: null }));
    if (!file) return;
    const max = limits.data?.maxBytes;
    if (max !== undefined && file.size > max) {
      setProblems((p) => ({
        ...p,
        [key]: `${file.name} is ${formatBytes(file.size)}: files of ${formatBytes(max)} at most`,
      }));
      return;
    }
    const controller = new AbortController();
    running.current[key] = controller;
    setUploads((u) => ({ ...u, [key]: { kind: 'sending', sent: 0, total: file.size } }));
    try {
      const stored = await uploadFile(file, {
        organization,
        signal: controller.signal,
        onProgress: (sent, total) => setUploads((u) => ({ ...u, [key]: { kind: 'sending', sent, total } })),
      });
      if (controller.signal.aborted) return;
      setUploads((u) => ({ ...u, [key]: null }));
      set(key, { fileId: stored.fileId, name: stored.name, bytes: stored.bytes });
    } catch (err) {
      // Stopped for a newer choice, or as the form went: that one speaks for the field now.
      if (controller.signal.aborted) return;
      setUploads((u) => ({ ...u, [key]: null }));
      setProblems((p) => ({ ...p, [key]: `not uploaded: ${errorMessage(err)}` }));
    } finally {
      if (running.current[key] === controller) delete running.current[key];
    }
  };
  const send = async (action: 'COMPLETE' | 'CANCEL') => {
    const data = action === 'COMPLETE' ? answerData(spec, controls, values) : {};
    if (action === 'COMPLETE') {
      const found = problemsByField(spec, data);
      setProblems(found);
      if (Object.keys(found).length > 0) return focusFirst(found);
    }
    setSending(true);
    try {
      await sendCall(calls.tasks.answer({ processInstanceId, nodeId, action, ...(action === 'COMPLETE' && { data }) }));
      setOutcome({ kind: 'done', action });
      onAnswered?.(action);
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) {
        const found = refusalByField(err.details);
        // A problem of no control shown (a key the form does not have) is said above the buttons.
        const known = Object.keys(found).some((k) => controls.some((c) => c.key === k));
        setProblems(found);
        setOutcome(known ? null : { kind: 'error', message: err.message });
        focusFirst(found);
      } else if (err instanceof ApiError && TOO_LATE.has(err.code)) setOutcome({ kind: 'late', code: err.code });
      else setOutcome({ kind: 'error', message: errorMessage(err) });
    } finally {
      setSending(false);
    }
  };

  const execution = `/executions/${encodeURIComponent(processInstanceId)}`;
  if (outcome?.kind === 'done')
    return (
      <p role="status" class="task-done">
        {outcome.action === 'COMPLETE'
          ? '✓ Answered: the execution goes on. '
          : '⊘ Cancelled: the execution takes its cancel path. '}
        <a href={execution}>Open the execution</a>
      </p>
    );
  if (outcome?.kind === 'late')
    return (
      <div role="alert" class="task-late">
        <p>
          <strong>Too late: this task no longer waits.</strong>{' '}
          {outcome.code === 'NODE_NOT_WAITING'
            ? 'Someone else answered it, or its timer fired, before your answer arrived.'
            : 'Its execution ended (answered elsewhere, timed out or cancelled) before your answer arrived.'}{' '}
          Nothing you typed was sent.
        </p>
        <p>
          <a href={execution}>Open the execution</a> to see what happened.
        </p>
      </div>
    );
  const disabled = !mayExecute || claimedByOther !== undefined || sending;
  return (
    <form
      ref={form}
      class="task-form"
      aria-labelledby={`${idBase}-title`}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void send('COMPLETE');
      }}
    >
      <h3 id={`${idBase}-title`} class="task-title">
        {spec.formTitle ?? nodeName}
      </h3>
      {spec.approval && (
        <div class="approval">
          <p>
            The agent asks to call <strong>{spec.approval.tool}</strong>
            {spec.approval.server ? ` on the MCP server ${spec.approval.server}` : ''}. Complete runs it (edit the
            arguments to change them); Cancel refuses it, and the agent reads that.
          </p>
          {spec.approval.reasoning !== null && <blockquote class="reasoning">{spec.approval.reasoning}</blockquote>}
        </div>
      )}
      {controls.map((c) => (
        <TaskField
          key={c.key}
          control={c}
          value={values[c.key]}
          idBase={idBase}
          problem={problems[c.key] ?? null}
          disabled={disabled}
          onChange={(v) => set(c.key, v)}
          onFile={(f) => void chooseFile(c.key, f)}
          upload={uploads[c.key] ?? null}
        />
      ))}
      {outcome?.kind === 'error' && (
        <p role="alert" class="error-text">
          {`The daemon did not take the answer: ${outcome.message}`}
        </p>
      )}
      {claimedByOther !== undefined ? (
        <p class="muted">{`${claimedByOther} claimed this task: only they answer it, unless they unclaim it.`}</p>
      ) : mayExecute ? (
        <div class="task-buttons">
          <button type="submit" class="primary" disabled={sending || uploading}>
            Complete
          </button>
          <button type="button" class="danger" disabled={sending} onClick={() => setAsking(true)}>
            Cancel task
          </button>
        </div>
      ) : (
        <p class="muted">You may read this task; answering it needs the permission to run executions.</p>
      )}
      <ConfirmDialog
        open={asking}
        titleId={`${idBase}-confirm`}
        title="Cancel this task?"
        message={`${nodeName} takes its cancel path (its errorFlow; without one the execution is cancelled). This cannot be undone.`}
        confirm="Cancel task"
        dismiss="Keep it waiting"
        onAnswer={(yes) => {
          setAsking(false);
          if (yes) void send('CANCEL');
        }}
      />
    </form>
  );
}
