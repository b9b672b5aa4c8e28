import { useEffect, useRef, useState } from 'react';
import { progressOf, type WfxClient } from '../../client/client.js';
import type { Execution, LogLine, StreamingAnswer } from '../types.js';

/** Kept of a streaming answer: the view shows only its tail. */
const KEEP_CHARS = 2000;

/**
 * One execution and its log, live: the log over SSE (resuming with Last-Event-ID), the execution
 * re-read as lines come, and the answers models are streaming (`progress` events), each dropped
 * when its node's next log line comes: the durable lines replace it. When `changes` moves after
 * it ended (a retry), it is read again, and followed again if it runs.
 */
export function useExecution(
  client: WfxClient,
  id: string,
  changes = 0,
): {
  execution: Execution | null;
  logs: readonly LogLine[];
  streaming: readonly StreamingAnswer[];
  error: string | null;
} {
  const [execution, setExecution] = useState<Execution | null>(null);
  const [logs, setLogs] = useState<readonly LogLine[]>([]);
  const [streaming, setStreaming] = useState<readonly StreamingAnswer[]>([]);
  const [error, setError] = useState<string | null>(null);
  // The stream ends with the execution; a retry brings it back to life: then it is followed again.
  const [round, setRound] = useState(0);
  const ended = useRef(false);
  useEffect(() => {
    if (!ended.current) return;
    let live = true;
    client.instances.get(id).then(
      (e) => {
        if (!live) return;
        setExecution(e);
        if (e.state === 'RUNNING') {
          ended.current = false;
          setRound((r) => r + 1);
        }
      },
      () => undefined, // the stream's own reads say why the daemon is away
    );
    return () => {
      live = false;
    };
  }, [client, id, changes]);
  useEffect(() => {
    ended.current = false;
    const abort = new AbortController();
    const lines: LogLine[] = [];
    /** By nodeInstanceId, in the order they began. */
    const answers = new Map<string, StreamingAnswer>();
    const showAnswers = () => setStreaming([...answers.values()]);
    let last: string | undefined;
    const read = () => client.instances.get(id).then((e) => !abort.signal.aborted && setExecution(e));
    void (async () => {
      for (let attempt = 0; !abort.signal.aborted; attempt++) {
        try {
          await read();
          const events = client.instances.streamLogs(id, { lastEventId: last, signal: abort.signal, progress: true });
          for await (const ev of events) {
            if (ev.event === 'end') {
              answers.clear();
              showAnswers();
              await read();
              ended.current = true;
              return;
            }
            const p = progressOf(ev);
            if (p) {
              const before = answers.get(p.nodeInstanceId)?.text ?? '';
              answers.set(p.nodeInstanceId, {
                nodeInstanceId: p.nodeInstanceId,
                nodeId: p.nodeId,
                text: (before + p.delta).slice(-KEEP_CHARS),
              });
              showAnswers();
              continue;
            }
            if (!ev.data) continue;
            last = ev.id ?? last;
            const line = { id: Number(ev.id ?? lines.length + 1), ...(JSON.parse(ev.data) as Omit<LogLine, 'id'>) };
            lines.push(line);
            setLogs([...lines]);
            let dropped = false;
            for (const [key, a] of answers) if (a.nodeId === line.nodeId) dropped = answers.delete(key);
            if (dropped) showAnswers();
            // Not awaited (the stream goes on): a failed read is shown, never left unhandled,
            // which would end the TUI's process.
            read().catch((err: unknown) => !abort.signal.aborted && setError((err as Error).message));
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
  }, [client, id, round]);
  return { execution, logs, streaming, error };
}
