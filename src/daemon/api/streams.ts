import type { FastifyReply } from 'fastify';
import type {} from 'fastify-sse-v2'; // reply.sse
import type { Engine, LifecycleEvent, LogsAdvanced, WorkProgress } from '../engine/engine.js';
import type { WfxState } from '../state/state.js';
import { credentialLapsed } from './auth.js';
import type { Caller } from './caller.js';
import { SseWriter } from './sse-writer.js';

type LogsListener = (advanced: LogsAdvanced) => void;
type EndListener = () => void;
type ProgressListener = (progress: WorkProgress) => void;

/**
 * Fans the engine's log progress and lifecycle events out to SSE clients, with per-execution
 * subscriber sets, so a step costs one lookup however many clients watch other executions.
 * It listens to lifecycle events only while a client of GET /events is connected (building them
 * costs every step), and to model progress only while a log stream follows an execution. Unsubscribing removes exactly what was added: clients that go away leave
 * nothing behind.
 */
export class StreamHub {
  private readonly logs = new Map<string, Set<LogsListener>>();
  private readonly ends = new Map<string, Set<EndListener>>();
  private readonly events = new Set<(e: LifecycleEvent) => void>();
  private readonly progress = new Map<string, Set<ProgressListener>>();
  /**
   * How to end each open stream, with the execution it is of (undefined: of none): a graceful
   * stop ends them (clients reconnect), else it would wait forever.
   */
  private readonly open = new Map<() => void, string | undefined>();
  // Executions handed over to another daemon: their streams end without `end`, and their
  // clients reconnect (Last-Event-ID) to where they are now, the new holder.
  private readonly onHandedOver = (leaving: (id: string) => boolean) => {
    for (const [end, id] of [...this.open]) if (id !== undefined && leaving(id)) end();
  };
  private readonly onLogs = (advanced: LogsAdvanced) => {
    for (const fn of this.logs.get(advanced.processInstanceId) ?? []) fn(advanced);
  };
  private readonly onFinished = (id: string) => {
    for (const fn of this.ends.get(id) ?? []) fn();
  };
  private readonly onLifecycle = (e: LifecycleEvent) => {
    for (const fn of this.events) fn(e);
  };
  private readonly onProgress = (p: WorkProgress) => {
    for (const fn of this.progress.get(p.processInstanceId) ?? []) fn(p);
  };

  constructor(private readonly engine: Engine) {
    engine.on('logs', this.onLogs);
    engine.on('finished', this.onFinished);
    engine.on('handedOver', this.onHandedOver);
  }

  /**
   * Calls `onLogs` each time execution `id` has new durable log entries, and `onEnd` once it
   * finishes (after its last entries). Returns the unsubscribe.
   */
  watchExecution(id: string, onLogs: LogsListener, onEnd: EndListener): () => void {
    add(this.logs, id, onLogs);
    add(this.ends, id, onEnd);
    return () => {
      remove(this.logs, id, onLogs);
      remove(this.ends, id, onEnd);
    };
  }

  /**
   * Resolves true once execution `id` finishes (or at once when `ended()`, asked once listening,
   * says it has), false when `ms` pass first, `signal` aborts (the caller went away), the
   * execution is handed over to another daemon, or the daemon stops: a synchronous start's wait.
   */
  untilEnded(id: string, ms: number, ended: () => boolean, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      let settled = false;
      const settle = (done: boolean): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        remove(this.ends, id, onEnd);
        untrack();
        signal?.removeEventListener('abort', onAbort);
        resolve(done);
      };
      const onEnd = (): void => settle(true);
      const onAbort = (): void => settle(false);
      const timer = setTimeout(() => settle(false), ms);
      add(this.ends, id, onEnd);
      const untrack = this.track(() => settle(false), id);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted === true || ended()) settle(!signal?.aborted);
    });
  }

  /** Calls `fn` with each piece of model answer of execution `id` as it streams. Returns the unsubscribe. */
  watchProgress(id: string, fn: ProgressListener): () => void {
    if (this.progress.size === 0) this.engine.on('progress', this.onProgress);
    add(this.progress, id, fn);
    return () => {
      remove(this.progress, id, fn);
      if (this.progress.size === 0) this.engine.off('progress', this.onProgress);
    };
  }

  /** Calls `fn` for every lifecycle event. Returns the unsubscribe. */
  watchEvents(fn: (e: LifecycleEvent) => void): () => void {
    if (this.events.size === 0) this.engine.on('lifecycle', this.onLifecycle);
    this.events.add(fn);
    return () => {
      if (!this.events.delete(fn)) return;
      if (this.events.size === 0) this.engine.off('lifecycle', this.onLifecycle);
    };
  }

  /** Registers how to end an open stream (of execution `instanceId`, if one's). Returns the unregister. */
  track(end: () => void, instanceId?: string): () => void {
    this.open.set(end, instanceId);
    return () => this.open.delete(end);
  }

  /** Ends every open stream (graceful stop). */
  endAll(): void {
    for (const end of [...this.open.keys()]) end();
    this.open.clear();
  }

  /** Subscribers now, for tests of leaks. */
  get subscriberCount(): number {
    let n = this.events.size + this.open.size;
    for (const set of this.logs.values()) n += set.size;
    for (const set of this.ends.values()) n += set.size;
    for (const set of this.progress.values()) n += set.size;
    return n;
  }

  close(): void {
    this.engine.off('logs', this.onLogs);
    this.engine.off('finished', this.onFinished);
    this.engine.off('handedOver', this.onHandedOver);
    this.engine.off('lifecycle', this.onLifecycle);
    this.engine.off('progress', this.onProgress);
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

/**
 * For an event stream, which outlives the check of its request's credential: a function that,
 * once `caller`'s API key is suspended, revoked or expired (or its JWT expired), sends an
 * `error` event (`{ error: 'UNAUTHORIZED', message }`), calls `stop` and ends the stream, and
 * returns true. The stream asks it before each event and heartbeat, so nothing is sent on a
 * credential that would be refused now (SPEC: such keys are 401). `out`: the reply of a stream
 * written through fastify-sse-v2, or the stream's own SseWriter.
 */
export function lapsedCredential(
  state: WfxState,
  caller: Caller,
  now: () => Date,
  out: FastifyReply | SseWriter,
  stop: () => void,
): () => boolean {
  return () => {
    const lapsed = credentialLapsed(state, caller, now());
    if (lapsed === null) return false;
    stop();
    const error = { event: 'error', data: JSON.stringify({ error: lapsed.code, message: lapsed.message }) };
    if (out instanceof SseWriter) {
      out.send(error);
      out.end();
    } else {
      out.sse(error);
      out.sseContext.source.end();
    }
    return true;
  };
}
