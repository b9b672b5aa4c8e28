import type { WfxClient } from '../../client/client.js';
import type { WaitingTask } from '../../shared/api/index.js';
import { usePolled, type Polled } from './use-polled.js';

/** A waiting task as GET /process/tasks lists it (the wire's type). */
export type Task = WaitingTask;

/** GET /process/tasks: the waiting tasks, oldest first. */
export async function loadTasks(client: WfxClient): Promise<Task[]> {
  return (await client.tasks.list({ limit: 1000 })).items;
}

/**
 * The waiting tasks, read again whenever `changes` moves (an execution started, waited or ended)
 * and on `reload()`; no timer (every change to a task comes with an event). A failed read keeps
 * the last list and says why (`CODE: message`) in `error`.
 */
export function useTasks(client: WfxClient, changes: number): Polled<Task[]> {
  return usePolled(() => loadTasks(client), changes, null);
}
