/*
 * The one stream of lifecycle events a page holds (GET /events, Server-Sent Events): opened when
 * the first listener subscribes, closed when the last leaves. EventSource reconnects by itself
 * after a drop; when it gives up (the daemon refused it), the session is checked (a 401 leaves for
 * sign-in) and the stream opened again after a pause.
 */
import type { LifecycleEventView } from '../../shared/api/meta.js';
import { streams } from '../../shared/api/calls/index.js';
import { checkSession } from './http.js';

/** The event types GET /events sends (the SSE `event` field). */
export const LIFECYCLE_TYPES = [
  'PROCESS_STARTED',
  'PROCESS_COMPLETED',
  'PROCESS_FAILED',
  'PROCESS_CANCELLED',
  'PROCESS_RETRIED',
  'NODE_STARTED',
  'NODE_WAITING',
  'NODE_COMPLETED',
  'NODE_FAILED',
  'NODE_CANCELLED',
  'NODE_TIMEDOUT',
] as const;

/** Milliseconds before a stream the daemon refused is opened again. */
const REOPEN_MS = 3000;

type Listener = (event: LifecycleEventView) => void;

/** The page's lifecycle event stream, shared by every view that listens. */
export class LiveEvents {
  private readonly listeners = new Set<Listener>();
  private source: EventSource | null = null;
  private reopen: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly url = streams.events()) {}

  /** Calls `listener` with every event from now on; returns the unsubscribe. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.open();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.close();
    };
  }

  private open(): void {
    const source = new EventSource(this.url);
    this.source = source;
    const deliver = (e: MessageEvent<string>) => {
      let data: LifecycleEventView;
      try {
        data = JSON.parse(e.data) as LifecycleEventView;
      } catch {
        return;
      }
      for (const l of [...this.listeners]) l(data);
    };
    for (const type of LIFECYCLE_TYPES) source.addEventListener(type, deliver);
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED || this.source !== source) return;
      this.source = null;
      void checkSession();
      this.reopen = setTimeout(() => {
        this.reopen = null;
        if (this.listeners.size > 0 && this.source === null) this.open();
      }, REOPEN_MS);
    };
  }

  private close(): void {
    this.source?.close();
    this.source = null;
    if (this.reopen !== null) clearTimeout(this.reopen);
    this.reopen = null;
  }
}
