import { Box, Text, useInput } from 'ink';
import { useEffect, useRef, useState } from 'react';
import { AnswerForm } from '../components/answer-form.js';
import { KeyBar } from '../components/key-bar.js';
import { TasksTable } from '../components/tasks-table.js';
import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { useAnswer, type SubmitTask, type UploadFile } from '../hooks/use-answer.js';
import { useTasks, type Task } from '../hooks/use-tasks.js';
import { useWidth } from '../hooks/use-width.js';
import { SHELL_KEYS, type ScreenProps } from './screen.js';
import { cursorAt, moveCursor } from '../cursor.js';
import { useNotice } from '../hooks/use-notice.js';
import { terminalCopy } from '../clipboard.js';
import type { WfxClient } from '../../client/client.js';

const taskKey = (t: Task) => `${t.processInstanceId}|${t.nodeInstanceId}`;

/**
 * The waiting tasks screen: every input node and user task waiting in the organization, read
 * again as executions change; enter opens one to answer it with a form for its input type; `c`
 * claims the selected one, or gives back one claimed (the daemon refuses another's: TASK_CLAIMED).
 * `submit` replaces POST /process/task (tests).
 */
export function TasksScreen(props: ScreenProps & { readonly submit?: SubmitTask; readonly upload?: UploadFile }) {
  const { client, rows, now, active, changes, setCapture } = props;
  const copy = props.copy ?? terminalCopy();
  const { data: items, error, reload } = useTasks(client, changes);
  const [selected, setSelected] = useState(0);
  const [open, setOpen] = useState<Task | null>(null);
  const [notice, setNotice] = useNotice(active);
  const width = useWidth();
  const list = items ?? [];
  const at = cursorAt(selected, list.length);
  const submit: SubmitTask = props.submit ?? ((body) => client.tasks.answer(body));
  const upload: UploadFile = props.upload ?? uploader(client);

  const latest = useRef({ open, current: list[at] ?? null, count: list.length });
  latest.current = { open, current: list[at] ?? null, count: list.length };

  // The form takes every key from the enter that opens it to the key that closes it: capture is
  // turned on in the enter handler itself (the shell must not read a q typed right after enter as quit).
  const close = (what: string | null) => {
    setOpen(null);
    setCapture(false);
    setNotice(what);
    reload();
  };
  const capture = useRef(setCapture);
  capture.current = setCapture;
  useEffect(() => () => void (latest.current.open && capture.current(false)), []);
  useInput(
    (input, key) => {
      const { open, current, count } = latest.current;
      if (open) return; // the answer has the keys
      if (input === 'y' && current) {
        copy(current.processInstanceId);
        return setNotice(`copied ${current.processInstanceId} (the execution that waits)`);
      }
      if (input === 'c' && current) {
        const action = current.claim === null ? 'CLAIM' : 'UNCLAIM';
        const what = `${current.nodeName} of ${current.processInstanceId}`;
        submit({ processInstanceId: current.processInstanceId, nodeId: current.nodeId, action }).then(
          () => {
            setNotice(`${action === 'CLAIM' ? 'claimed' : 'unclaimed'} ${what}`);
            reload();
          },
          (err: Error) => setNotice(`not ${action === 'CLAIM' ? 'claimed' : 'unclaimed'}: ${err.message}`),
        );
        return;
      }
      // Functional updates with the count from the ref: keys faster than paints each move one.
      setSelected((s) => moveCursor(s, count, input, key));
      if (key.return && current) {
        latest.current = { ...latest.current, open: current };
        setOpen(current);
        setCapture(true);
        setNotice(null);
      }
    },
    { isActive: active },
  );

  if (open)
    return (
      <Answering
        key={taskKey(open)}
        task={open}
        submit={submit}
        upload={upload}
        now={now}
        onDone={(what) => close(what)}
        onClose={() => close(null)}
      />
    );
  return (
    <Box flexDirection="column">
      <TasksTable items={items} selected={at} now={now} rows={Math.max(3, rows - 5)} width={width} />
      {error && <Text color="yellow">cannot read the tasks: {error.text}</Text>}
      {notice && <Text dimColor>{notice}</Text>}
      <KeyBar
        keys={[
          ['↑↓', 'move'],
          ['enter', 'answer'],
          ['c', list[at]?.claim ? 'unclaim' : 'claim'],
          ['y', 'copy id'],
          ...SHELL_KEYS,
        ]}
      />
    </Box>
  );
}

/** Uploads a file input's path: the TUI runs where the files are, so the path is read here and sent (POST /files). */
export function uploader(client: WfxClient): UploadFile {
  return async (path) => {
    const content = await readFile(resolve(path));
    return (await client.files.put(content, { name: basename(path) })).fileId;
  };
}

/** The answer view of one task: the form and the keys that fit the focused field (the tasks screen's, and an open execution's). */
export function Answering(props: {
  readonly task: Task;
  readonly submit: SubmitTask;
  readonly upload: UploadFile;
  readonly now: Date;
  readonly onDone: (what: string) => void;
  readonly onClose: () => void;
}) {
  const { task, submit, now } = props;
  const s = useAnswer(task, submit, { onDone: props.onDone, onClose: props.onClose }, props.upload);
  const focused = s.draft.fields[s.draft.focus];
  const keys: Array<readonly [string, string]> = s.confirming
    ? [
        ['y', 'cancel the task'],
        ['n', 'keep it'],
      ]
    : [];
  if (!s.confirming) {
    if (s.draft.fields.length > 1) keys.push(['tab', 'next']);
    // A form lays its choices out on one line (← →), a single choice one option a line (↑↓): both move either way.
    if (focused?.kind === 'choice')
      keys.push(
        [task.inputType === 'form' ? '← →' : '↑↓', 'option'],
        ['space', focused.multiple ? 'toggle' : 'choose'],
      );
    if (focused?.kind === 'text' && focused.multiline) keys.push(['enter', 'new line']);
    keys.push(
      [focused?.kind === 'text' && !focused.multiline && s.draft.fields.length === 1 ? 'enter' : 'ctrl+s', 'complete'],
      ['ctrl+x', 'cancel'],
      ['esc', 'back'],
    );
  }
  return (
    <Box flexDirection="column">
      <AnswerForm
        task={task}
        draft={s.draft}
        problems={s.problems}
        confirming={s.confirming}
        sending={s.sending}
        failure={s.failure}
        now={now}
      />
      <KeyBar keys={keys} />
    </Box>
  );
}
