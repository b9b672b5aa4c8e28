/* An execution's log, followed live while the component shows it (api/log-follower.ts). */
import { useEffect, useRef, useState } from 'preact/hooks';
import { streams } from '../../shared/api/calls/index.js';
import { checkSession } from '../api/http.js';
import { LogFollower } from '../api/log-follower.js';
import { addEntries, EMPTY_LOG, endLog, type LogArrival, type LogState } from '../model/log.js';

/**
 * The log of execution `id`, entries taken in once per animation frame; `onActivity` is called
 * after each batch and at the end (the page re-reads the execution then). A new `generation`
 * follows it again from the start: an execution retried after its stream ended runs on.
 */
export function useLog(id: string, onActivity: () => void, generation = 0): LogState {
  const [log, setLog] = useState<LogState>(EMPTY_LOG);
  const activity = useRef(onActivity);
  activity.current = onActivity;
  useEffect(() => {
    setLog(EMPTY_LOG);
    let queued: LogArrival[] = [];
    let frame: number | null = null;
    const flush = () => {
      frame = null;
      const batch = queued;
      queued = [];
      setLog((l) => addEntries(l, batch));
      activity.current();
    };
    const follower = new LogFollower(streams.logs(id, { follow: true }), {
      open: (url) => new EventSource(url),
      entries: (arrivals) => {
        queued.push(...arrivals);
        frame ??= requestAnimationFrame(flush);
      },
      ended: () => {
        if (frame !== null) cancelAnimationFrame(frame);
        flush();
        setLog(endLog);
      },
      refused: () => void checkSession(),
      setTimer: (fn, ms) => setTimeout(fn, ms),
      clearTimer: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
      reopenMs: 3000,
    });
    return () => {
      follower.stop();
      if (frame !== null) cancelAnimationFrame(frame);
    };
  }, [id, generation]);
  return log;
}
