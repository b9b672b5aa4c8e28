import { useCallback, useEffect, useRef, useState } from 'react';
import type { ApiClient } from '../../cli/client.js';
import type { WaitingTask } from '../../daemon/engine/tasks.js';

/** A waiting task as GET /process/tasks lists it (the daemon's own type: one shape). */
export type Task = WaitingTask;

/**
 * The waiting tasks (GET /process/tasks, oldest first), read again whenever `changes` moves (an
 * execution started, waited or ended) and on `reload()`. A failed read keeps the last list and
 * says why in `error`.
 */
export function useTasks(client: ApiClient, changes: number): { items: readonly Task[] | null; error: string | null; reload: () => void } {
  const [items, setItems] = useState<readonly Task[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [asked, setAsked] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const read = ++latest.current; // an older read answering late never overwrites a newer one
    client.get<{ items: Task[] }>('/process/tasks?limit=1000').then(
      (res) => {
        if (read !== latest.current) return;
        setItems(res.items);
        setError(null);
      },
      (err: Error) => read === latest.current && setError(err.message),
    );
  }, [client, changes, asked]);
  const reload = useCallback(() => setAsked((n) => n + 1), []);
  return { items, error, reload };
}
