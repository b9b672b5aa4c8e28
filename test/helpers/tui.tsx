import { setImmediate as yieldToReact } from 'node:timers/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { render } from 'ink-testing-library';
import { ApiClient } from '../../src/cli/client.js';
import type { SubmitTask } from '../../src/tui/hooks/use-answer.js';
import type { Task } from '../../src/tui/hooks/use-tasks.js';
import { TasksScreen } from '../../src/tui/screens/tasks-screen.js';

/** Keys as a terminal sends them. */
export const KEY = {
  enter: '\r',
  esc: '\u001b',
  tab: '\t',
  shiftTab: '\u001b[Z',
  up: '\u001b[A',
  down: '\u001b[B',
  backspace: '\u007f',
  ctrlS: '\u0013',
  ctrlX: '\u0018',
} as const;

/**
 * Waits (at most 10 s) until the last frame matches, then lets React attach the handlers of
 * what it just drew (Ink listens for keys from an effect), so the next key reaches them.
 */
export async function frameMatching(lastFrame: () => string | undefined, re: RegExp): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const f = lastFrame() ?? '';
    if (re.test(f)) {
      await yieldToReact();
      return f;
    }
    await delay(20);
  }
  throw new Error(`no frame matched ${re}; last:\n${lastFrame()}`);
}

/** A waiting task as the API lists it; `extra` overrides. */
export function task(extra: Partial<Task> = {}): Task {
  return {
    processInstanceId: '01a1fe30-edc6-7617-bd1f-84feb7474dfd',
    processId: '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11',
    processName: 'Order approval',
    processVersion: '3',
    organization: 'default',
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
    dueAt: null,
    waitingSince: '2026-11-21T10:04:11.000Z',
    ...extra,
  };
}

/** An API client that answers GET /process/tasks with `tasks` and nothing else. */
export class TasksOnlyClient extends ApiClient {
  constructor(private readonly tasks: readonly Task[]) {
    super({ url: 'http://daemon.test', apiKey: null, credentialSource: 'test' });
  }

  override async request<T>(method: string, path: string): Promise<T> {
    if (method === 'GET' && path.startsWith('/process/tasks')) return { items: this.tasks, nextCursor: null } as T;
    throw new Error(`unexpected ${method} ${path}`);
  }
}

export type Sent = Parameters<SubmitTask>[0];

/**
 * The tasks screen over `tasks`, with a submit that records what it is given and answers with
 * `answer` (default: accepted). Returns the render, what was sent and the capture calls.
 */
export function renderTasks(tasks: readonly Task[], options: { answer?: (body: Sent) => Promise<unknown>; now?: Date; columns?: number } = {}) {
  const sent: Sent[] = [];
  const captures: boolean[] = [];
  const submit: SubmitTask = (body) => {
    sent.push(body);
    return options.answer ? options.answer(body) : Promise.resolve({ status: 'resumed' });
  };
  const ui = render(
    <TasksScreen
      client={new TasksOnlyClient(tasks)}
      rows={23}
      now={options.now ?? new Date('2026-11-21T10:05:01.000Z')}
      active
      changes={0}
      setCapture={(c) => captures.push(c)}
      submit={submit}
    />,
  );
  return { ui, sent, captures };
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

/** Waits (at most 10 s) until `ok()`. */
export async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await delay(20);
  if (!ok()) throw new Error(`timed out waiting until ${what}`);
}

/** `text` as a RegExp source matching it literally. */
export function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
