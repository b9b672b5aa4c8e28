/* A read of the API held by a component: loaded when its call changes, reloaded when asked. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { Call } from '../../shared/api/calls/index.js';
import { asError, send, type ApiError } from '../api/http.js';

/** What useApi gives: the last answer, the last error, and a reload. */
export interface ApiRead<T> {
  /** The last answer (kept while a reload runs); undefined before the first. */
  readonly data: T | undefined;
  /** The last read's error; null after a read that succeeded. */
  readonly error: ApiError | Error | null;
  /** A read is under way. */
  readonly loading: boolean;
  /** Reads again, keeping what is shown until the answer comes; one read at a time, one more queued. */
  readonly reload: () => void;
  /** Whether a read is under way now (unlike `loading`, true from the moment it is sent). */
  readonly reading: () => boolean;
}

/**
 * Sends `call` (a GET of shared/api/calls; null: nothing to read), and again when its path
 * changes or `reload` is called. A read still under way when the path changes is aborted;
 * reloads asked for during a read are merged into one read after it.
 */
export function useApi<T>(call: Call<T> | null): ApiRead<T> {
  const path = call === null ? null : call.path;
  const [state, setState] = useState<{ data: T | undefined; error: ApiError | Error | null; loading: boolean }>({
    data: undefined,
    error: null,
    loading: path !== null,
  });
  const current = useRef({ call, path, inFlight: false, again: false, controller: null as AbortController | null });

  const read = useCallback(() => {
    const c = current.current;
    if (c.call === null) return;
    if (c.inFlight) {
      c.again = true;
      return;
    }
    c.inFlight = true;
    const controller = new AbortController();
    c.controller = controller;
    const asked = c.path;
    setState((s) => (s.loading ? s : { ...s, loading: true }));
    send(c.call, { signal: controller.signal })
      .then(
        (data) => {
          if (current.current.path === asked) setState({ data, error: null, loading: false });
        },
        (error: unknown) => {
          if (controller.signal.aborted || current.current.path !== asked) return;
          setState((s) => ({ ...s, error: asError(error), loading: false }));
        },
      )
      .finally(() => {
        if (c.controller === controller) {
          c.inFlight = false;
          c.controller = null;
          if (c.again && current.current.path === asked) {
            c.again = false;
            read();
          }
        }
      });
  }, []);

  useEffect(() => {
    const c = current.current;
    c.controller?.abort();
    current.current = { call, path, inFlight: false, again: false, controller: null };
    setState({ data: undefined, error: null, loading: path !== null });
    read();
    return () => current.current.controller?.abort();
  }, [path, read]);

  const reading = useCallback(() => current.current.inFlight, []);
  return { ...state, reload: read, reading };
}
