import { useEffect, useState } from 'react';
import type { WfxClient } from '../../client/client.js';
import type { Execution, LogLine } from '../types.js';

/** One execution and its log, live: the log over SSE (resuming with Last-Event-ID), the execution re-read as lines come. */
export function useExecution(
  client: WfxClient,
  id: string,
): { execution: Execution | null; logs: readonly LogLine[]; error: string | null } {
  const [execution, setExecution] = useState<Execution | null>(null);
  const [logs, setLogs] = useState<readonly LogLine[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    const lines: LogLine[] = [];
    let last: string | undefined;
    const read = () => client.instances.get(id).then((e) => !abort.signal.aborted && setExecution(e));
    void (async () => {
      for (let attempt = 0; !abort.signal.aborted; attempt++) {
        try {
          await read();
          for await (const ev of client.instances.streamLogs(id, { lastEventId: last, signal: abort.signal })) {
            if (ev.event === 'end') {
              await read();
              return;
            }
            if (!ev.data || ev.event === 'progress') continue; // a model's answer streaming: not a log entry
            last = ev.id ?? last;
            lines.push({ id: Number(ev.id ?? lines.length + 1), ...(JSON.parse(ev.data) as Omit<LogLine, 'id'>) });
            setLogs([...lines]);
            void read();
          }
          return;
        } catch (err) {
          if (abort.signal.aborted) return;
          setError((err as Error).message);
          await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** attempt)));
        }
      }
    })();
    return () => abort.abort();
  }, [client, id]);
  return { execution, logs, error };
}
