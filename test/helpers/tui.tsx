import type { SubmitTask } from '../../src/tui/hooks/use-answer.js';
import type { Task } from '../../src/tui/hooks/use-tasks.js';
import { TasksScreen } from '../../src/tui/screens/tasks-screen.js';
import { frameMatching, KEY, renderAt } from './ink.js';
import { stubClient } from './stub-client.js';

/** A waiting task as the API lists it; `extra` overrides. */
export function task(extra: Partial<Task> = {}): Task {
  return {
    processInstanceId: '01a1fe30-edc6-7617-bd1f-84feb7474dfd',
    processId: '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11',
    processName: 'Order approval',
    processVersion: '3',
    organization: 'default',
    environment: 'PRODUCTION',
    correlationKey: 'order-42',
    nodeInstanceId: 'n4',
    nodeId: 'ask',
    nodeName: 'Approve',
    nodeType: 'inputNode',
    inputType: 'textbox',
    formTitle: 'Ship order 42 (39 EUR)?',
    options: null,
    fields: null,
    assignee: null,
    claim: null,
    dueAt: null,
    waitingSince: '2026-11-21T10:04:11.000Z',
    ...extra,
  };
}

/** An API client that answers GET /process/tasks with `tasks` and nothing else. */
export function tasksClient(tasks: readonly Task[]) {
  return stubClient(({ method, path }) => {
    if (method === 'GET' && path.startsWith('/process/tasks')) return { items: tasks, nextCursor: null };
    throw new Error(`unexpected ${method} ${path}`);
  });
}

export type Sent = Parameters<SubmitTask>[0];

/**
 * The tasks screen over `tasks`, with a submit that records what it is given and answers with
 * `answer` (default: accepted), in a terminal `columns` wide (default 100). Returns the render, what was sent and the capture calls.
 */
export function renderTasks(
  tasks: readonly Task[],
  options: {
    answer?: (body: Sent) => Promise<unknown>;
    now?: Date;
    columns?: number;
    /** Replaces the upload of a file input's path (default: a fileId made from the path). */
    upload?: (path: string) => Promise<string>;
  } = {},
) {
  const sent: Sent[] = [];
  const uploads: string[] = [];
  const upload = (path: string): Promise<string> => {
    uploads.push(path);
    return options.upload ? options.upload(path) : Promise.resolve(`file_${'0'.repeat(31)}${uploads.length}`);
  };
  const captures: boolean[] = [];
  const submit: SubmitTask = (body) => {
    sent.push(body);
    return options.answer ? options.answer(body) : Promise.resolve({ status: 'resumed' });
  };
  const ui = renderAt(
    <TasksScreen
      client={tasksClient(tasks)}
      rows={23}
      now={options.now ?? new Date('2026-11-21T10:05:01.000Z')}
      active
      changes={0}
      setCapture={(c) => captures.push(c)}
      submit={submit}
      upload={upload}
    />,
    options.columns ?? 100,
  );
  return { ui, sent, captures, uploads };
}

/** The tasks screen over one task, opened (enter): its form shows and takes the keys. */
export async function openTask(t: Task, options: Parameters<typeof renderTasks>[1] = {}) {
  const r = renderTasks([t], options);
  await frameMatching(r.ui.lastFrame, /enter\s+answer/);
  r.ui.stdin.write(KEY.enter);
  // frameMatching yields to React after the form shows: its key listener is attached then.
  await frameMatching(r.ui.lastFrame, new RegExp(escape(t.formTitle ?? t.nodeName)));
  if (r.captures.at(-1) !== true) throw new Error('enter did not give the form every key');
  return r;
}

/** `text` as a RegExp source matching it literally. */
export function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
