import type { Engine, LifecycleEvent, StreamedLog } from '../engine/engine.js';

type LogListener = (log: StreamedLog) => void;
type EndListener = () => void;

/**
 * Fans the engine's log lines and lifecycle events out to SSE clients: one engine listener
 * each, and per-execution subscriber sets, so a line costs one lookup however many clients
 * watch other executions. Unsubscribing removes exactly what was added (clients that go away
 * leave nothing behind).
 */
export class StreamHub {
  private readonly logs = new Map<string, Set<LogListener>>();
  private readonly ends = new Map<string, Set<EndListener>>();
  private readonly events = new Set<(e: LifecycleEvent) => void>();
  private readonly onLog = (log: StreamedLog) => {
    for (const fn of this.logs.get(log.processInstanceId) ?? []) fn(log);
  };
  private readonly onLifecycle = (e: LifecycleEvent) => {
    for (const fn of this.events) fn(e);
    if (e.type === 'PROCESS_COMPLETED' || e.type === 'PROCESS_FAILED' || e.type === 'PROCESS_CANCELLED') {
      for (const fn of this.ends.get(e.processInstanceId) ?? []) fn();
    }
  };

  constructor(private readonly engine: Engine) {
    engine.on('log', this.onLog);
    engine.on('lifecycle', this.onLifecycle);
  }

  /** Calls `onLog` for each new line of execution `id`, and `onEnd` once it finishes. Returns the unsubscribe. */
  watchExecution(id: string, onLog: LogListener, onEnd: EndListener): () => void {
    add(this.logs, id, onLog);
    add(this.ends, id, onEnd);
    return () => {
      remove(this.logs, id, onLog);
      remove(this.ends, id, onEnd);
    };
  }

  /** Calls `fn` for every lifecycle event. Returns the unsubscribe. */
  watchEvents(fn: (e: LifecycleEvent) => void): () => void {
    this.events.add(fn);
    return () => this.events.delete(fn);
  }

  /** Subscribers now, for tests of leaks. */
  get subscriberCount(): number {
    let n = this.events.size;
    for (const set of this.logs.values()) n += set.size;
    for (const set of this.ends.values()) n += set.size;
    return n;
  }

  close(): void {
    this.engine.off('log', this.onLog);
    this.engine.off('lifecycle', this.onLifecycle);
  }
}

function add<T>(map: Map<string, Set<T>>, key: string, value: T): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}

function remove<T>(map: Map<string, Set<T>>, key: string, value: T): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}
