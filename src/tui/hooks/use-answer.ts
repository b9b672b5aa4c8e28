import { useInput, type Key } from 'ink';
import { useEffect, useReducer, useRef } from 'react';
import type { TaskAction } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { errorText } from '../error-text.js';
import {
  dataOf,
  draftFor,
  keysOf,
  moveFocus,
  problemsOf,
  problemsOfError,
  typeInto,
  withFocused,
  type Draft,
} from '../answer.js';
import type { Task } from './use-tasks.js';

/** POST /process/task (tests pass their own). Rejects with the API's error, a WfxError. */
export type SubmitTask = (body: {
  processInstanceId: string;
  nodeId: string;
  action: TaskAction;
  data?: Record<string, unknown>;
}) => Promise<unknown>;

/** Uploads the file at `path` to the file store (POST /files); resolves with its fileId. Rejects with a WfxError. */
export type UploadFile = (path: string) => Promise<string>;

/** Where answering a task is. */
export interface AnswerState {
  readonly draft: Draft;
  /** What the validator or the API refused, until the next edit. */
  readonly problems: readonly string[];
  readonly confirming: boolean;
  readonly sending: boolean;
  readonly failure: string | null;
}

/**
 * Answering one task from the keyboard: typing goes to the focused field, tab / shift+tab move
 * between fields, ctrl+s completes (enter too, in a one-line answer; in a form's one-line field
 * enter moves on), ctrl+x cancels after y, esc closes. A COMPLETE is checked with the API's own
 * validator first and not sent when it would be refused; a refusal of the API (422) shows the
 * same way. `onDone` gets a line saying what happened.
 */
export function useAnswer(
  task: Task,
  submit: SubmitTask,
  callbacks: { readonly onDone: (what: string) => void; readonly onClose: () => void },
  upload?: UploadFile,
): AnswerState {
  // Kept in a ref so keys that come faster than paints each see the previous key's change.
  const state = useRef<AnswerState>({
    draft: draftFor(task),
    problems: [],
    confirming: false,
    sending: false,
    failure: null,
  });
  const [, repaint] = useReducer((n: number) => n + 1, 0);
  const set = (change: Partial<AnswerState>) => {
    state.current = { ...state.current, ...change };
    repaint();
  };

  // False once the form is closed (esc, even while an answer is being sent) or gone: a late
  // answer for it is ignored then.
  const open = useRef(true);
  useEffect(() => {
    open.current = true;
    return () => {
      open.current = false;
    };
  }, []);
  const close = () => {
    if (!open.current) return;
    open.current = false;
    callbacks.onClose();
  };

  const send = (action: 'COMPLETE' | 'CANCEL', data?: Record<string, unknown>) => {
    set({ sending: true, confirming: false, failure: null });
    submit({
      processInstanceId: task.processInstanceId,
      nodeId: task.nodeId,
      action,
      ...(data !== undefined && { data }),
    }).then(
      () =>
        open.current &&
        callbacks.onDone(
          `${action === 'COMPLETE' ? 'completed' : 'cancelled'} ${task.nodeName} of ${task.processName} (${task.processInstanceId})`,
        ),
      (err: unknown) => {
        if (!open.current) return;
        if (err instanceof WfxError && err.code === 'VALIDATION_ERROR')
          set({ sending: false, problems: problemsOfError(err) });
        else set({ sending: false, failure: errorText(err) });
      },
    );
  };
  const complete = () => {
    const data = dataOf(task, state.current.draft);
    const path = task.inputType === 'file' ? (data.inputValue as { path?: unknown } | undefined)?.path : undefined;
    if (typeof path === 'string' && upload) {
      // A file input given a path: the file is uploaded first, its fileId is the answer.
      set({ sending: true, failure: null, problems: [] });
      upload(path).then(
        (fileId) => {
          if (!open.current) return;
          const answer = { ...data, inputValue: fileId };
          const problems = problemsOf(task, answer);
          if (problems.length > 0) set({ sending: false, problems });
          else send('COMPLETE', answer);
        },
        (err: unknown) => open.current && set({ sending: false, failure: `cannot upload ${path}: ${errorText(err)}` }),
      );
      return;
    }
    const problems = problemsOf(task, data);
    if (problems.length > 0) set({ problems, failure: null });
    else send('COMPLETE', data);
  };

  useInput((chunk, chunkKey) => {
    for (const [input, key] of keysOf(chunk, chunkKey)) onKey(input, key);
  });
  function onKey(input: string, key: Key): void {
    const { draft, confirming, sending } = state.current;
    // Esc before anything else: a hung POST must not leave every key dead (while confirming, esc keeps the task, as n does).
    if (key.escape && !confirming) return close();
    if (sending) return;
    if (confirming) {
      if (input === 'y') send('CANCEL');
      else set({ confirming: false });
      return;
    }
    if (key.ctrl && input === 's') return complete();
    if (key.ctrl && input === 'x') return set({ confirming: true });
    if (key.tab) return set({ draft: moveFocus(draft, key.shift ? -1 : 1) });
    const focused = draft.fields[draft.focus];
    if (key.return && (!focused || (focused.kind === 'text' && !focused.multiline))) {
      return task.inputType === 'form' && draft.focus < draft.fields.length - 1
        ? set({ draft: moveFocus(draft, 1) })
        : complete();
    }
    const next = withFocused(draft, (f) => typeInto(f, input, key));
    if (next !== draft && next.fields[draft.focus] !== focused) set({ draft: next, problems: [], failure: null });
  }
  return state.current;
}
