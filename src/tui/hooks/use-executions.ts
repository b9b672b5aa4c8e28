import { useEffect, useState } from 'react';
import type { WfxClient } from '../../client/client.js';
import type { Connection, ExecutionSummary } from '../types.js';

/** Newest first, across every flow the credential may read (50 per flow); child executions only with `children`. */
export async function loadExecutions(client: WfxClient, children = false): Promise<ExecutionSummary[]> {
  const flows = (await client.flows.startable({ limit: 1000 })).items;
  const query = { limit: 50, ...(children && { children: true }) };
  const lists = await Promise.all(flows.map((f) => client.instances.list(f.processId, query)));
  return lists.flatMap((l) => l.items).sort((a, b) => (a.processInstanceId < b.processInstanceId ? 1 : -1));
}

/**
 * The executions, kept live: loaded, then reloaded when GET /events says an execution started or
 * ended (`changes` counts those, for screens that re-read on them). When the daemon goes away it says so and reconnects (backoff up to 5 s).
 */
export function useExecutions(
  client: WfxClient,
  children = false,
): {
  items: readonly ExecutionSummary[];
  connection: Connection;
  changes: number;
} {
  const [items, setItems] = useState<readonly ExecutionSummary[]>([]);
  const [changes, setChanges] = useState(0);
  const [connection, setConnection] = useState<Connection>({ state: 'connecting' });
  useEffect(() => {
    const abort = new AbortController();
    // Events that come within this window share one re-read: this list's re-read (and the tasks
    // screen's, which follows `changes`) walks the daemon's live executions, so a busy daemon
    // must not be walked once per event for each TUI watching it.
    const REREAD_MS = 500;
    let pending: NodeJS.Timeout | null = null;
    const reload = () => {
      if (pending) return;
      pending = setTimeout(() => {
        pending = null;
        setChanges((c) => c + 1);
        loadExecutions(client, children).then(
          (list) => !abort.signal.aborted && setItems(list),
          () => undefined,
        );
      }, REREAD_MS);
    };
    void (async () => {
      for (let attempt = 0; !abort.signal.aborted; attempt++) {
        try {
          setItems(await loadExecutions(client, children));
          setChanges((c) => c + 1); // reconnected: what other screens show may be stale too
          const events = client.events.stream(abort.signal);
          setConnection({ state: 'live' });
          attempt = 0;
          for await (const ev of events) if (ev.event !== undefined || ev.data) reload();
          if (abort.signal.aborted) return;
          throw new Error('the event stream ended');
        } catch (err) {
          if (abort.signal.aborted) return;
          setConnection({ state: 'reconnecting', error: (err as Error).message });
          await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** attempt)));
        }
      }
    })();
    return () => {
      abort.abort();
      if (pending) clearTimeout(pending);
    };
  }, [client, children]);
  return { items, connection, changes };
}
