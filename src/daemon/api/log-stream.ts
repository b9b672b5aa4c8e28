/**
 * GET /process/instance/{id}/logs: an execution's log as Server-Sent Events, every entry so far
 * then the live ones. A log can hold hundreds of thousands of entries: they are written a slice
 * at a time, each slice after the socket took the last one and after a turn of the event loop,
 * so a long replay (or several) never keeps other requests waiting, and a slow client holds no
 * more of it in memory than a slice and its socket's buffer.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LogProgress } from '../../shared/api/index.js';
import type { Engine } from '../engine/engine.js';
import { logEntry } from '../state/log-line.js';
import { execution } from '../state/executions.js';
import { STATE, type Execution, type WfxState } from '../state/state.js';
import { SseWriter, sseText } from './sse-writer.js';
import { lapsedCredential, type StreamHub } from './streams.js';

/** Text of one slice: written whole, then the replay yields. */
const SLICE_BYTES = 64 * 1024;

/** What a log stream needs besides its request. */
export interface LogStreamDeps {
  readonly engine: Engine;
  readonly hub: StreamHub;
  readonly state: WfxState;
  readonly now: () => Date;
  readonly heartbeatMs: number;
}

/**
 * Streams the log of `inst` (the caller may see it) on `reply`: the entries after `after` (the
 * client's Last-Event-ID), numbered from 1; then, with `follow`, the live ones and the model's
 * answer as it streams (`progress`, no id); `event: end` once the execution finished and every
 * entry was sent. Without `follow`, a running execution's stream ends after the entries durable
 * so far. Entries go out in order, each once.
 */
export function streamLogs(
  deps: LogStreamDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  inst: Execution,
  options: {
    readonly after: number;
    readonly follow: boolean;
    /** Called once when the stream stops (ended, its client gone, the daemon stopping). */
    readonly onEnd?: () => void;
  },
): void {
  const { engine, hub } = deps;
  const id = inst.processInstanceId;
  const out = new SseWriter(reply);
  /** Entries 1..sent have been written. */
  let sent = options.after;
  /** Entries 1..durable are durable: to be written. */
  let durable = engine.streamedLogCount(inst);
  /** The execution whose log is written: the live one as it advances. */
  let of = inst;
  /** The execution finished (its last entries durable): `end` once they are written. */
  let finished = false;
  /** Model answer pieces that came while entries before them were still to be written. */
  let progress: LogProgress[] = [];
  let pumping = false;
  let ended = false;

  const stop = () => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    unsubscribe();
    unwatchProgress();
    untrack();
    options.onEnd?.();
  };
  const lapsed = lapsedCredential(deps.state, request.caller!, deps.now, out, stop);

  /** Writes what is due, a slice a turn; then `progress`, then `end` or the stream's end as due. */
  const pump = async (): Promise<void> => {
    if (pumping) return;
    pumping = true;
    try {
      while (!ended && sent < durable) {
        if (out.closed) return stop();
        if (lapsed()) return;
        let text = '';
        for (; sent < durable && text.length < SLICE_BYTES; sent++)
          text += sseText({ id: String(sent + 1), data: JSON.stringify(logEntry(of, of.logs[sent]!)) });
        if (!out.write(text)) await out.drained();
        // A drain can come in the same turn (a write the kernel took at once): yield regardless.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      pumping = false;
    }
    if (ended) return;
    if (progress.length > 0 && !lapsed()) {
      for (const p of progress) out.send({ event: 'progress', data: JSON.stringify(p) });
      progress = [];
    }
    if (finished) {
      if (lapsed()) return;
      out.send({ event: 'end', data: JSON.stringify({ processInstanceId: id }) });
      stop();
      out.end();
    } else if (!options.follow) {
      stop();
      out.end();
    }
  };
  const run = () => void pump().catch((err: unknown) => request.log.error({ err }, 'log stream failed'));

  // Subscribe before the replay: nothing falls in between.
  const unsubscribe = hub.watchExecution(
    id,
    (advanced) => {
      of = advanced.instance;
      durable = Math.max(durable, advanced.upTo);
      run();
    },
    () => {
      finished = true;
      run();
    },
  );
  // A model's answer as it streams: no id (not journaled), so Last-Event-ID never points at one.
  const unwatchProgress = options.follow
    ? hub.watchProgress(id, (p) => {
        progress.push({ nodeId: p.nodeId, nodeInstanceId: p.nodeInstanceId, delta: p.delta });
        run();
      })
    : () => undefined;
  const heartbeat = setInterval(() => lapsed() || out.send({ comment: 'heartbeat' }), deps.heartbeatMs);
  // A graceful stop ends the stream without `end`: the client reconnects with Last-Event-ID.
  const untrack = hub.track(() => {
    stop();
    out.end();
  }, id);
  request.raw.on('close', stop);
  // Finished for good: archived, or its last step durable and every line durable. A final step
  // still on its way to disk ends the stream through the hub's `finished`, after its lines.
  // Resident: the route held it (InstanceReads.hold); gone cold since, it still runs.
  const live = execution(deps.state, id) ?? (engine.executions.coldSummary(id) !== undefined ? inst : undefined);
  finished = !live || (live.stateCd !== STATE.RUNNING && engine.streamedLogCount(live) === live.logs.length);
  // A client gone before the stream began: its close came before the listener above.
  if (out.closed || request.raw.destroyed) return stop();
  run();
}
