/**
 * How much of each live execution's log has been streamed (the engine's `log` and `logs`
 * events): a line is streamed only once the step that wrote it is durable, and a log stream
 * replays up to the count kept here before it follows the events.
 */
import { logEntry } from '../state/log-line.js';
import type { Execution, WfxState } from '../state/state.js';
import { execution } from '../state/executions.js';
import type { EngineEmitter, LogsAdvanced, StreamedLog } from './engine-events.js';

/** The streamed count of each live execution's log (see the top of this file). */
export class LogStreams {
  /** Log entries already streamed, per live execution. */
  private readonly streamed = new Map<string, number>();

  constructor(
    private readonly state: WfxState,
    private readonly emitter: EngineEmitter,
  ) {}

  /**
   * Before a step waits to be durable: the log length of each execution it touched, as pairs
   * of id and length, flat (nearly always one pair, where a Map cost more).
   */
  marks(touched: ReadonlySet<string>): Array<string | number> {
    const logsUpTo: Array<string | number> = [];
    for (const id of touched) logsUpTo.push(id, execution(this.state, id)?.logs.length ?? 0);
    return logsUpTo;
  }

  /**
   * Streams execution `id`'s log lines not streamed yet, up to `upTo` (a log stream ends on its
   * execution's PROCESS_* event, after every line): each line to `log` listeners when there are
   * any (`perEntry`), and how far it got to `logs`. `leaving`: the execution leaves the live
   * state once this is done (streamedLogCount then counts its whole log).
   */
  stream(id: string, upTo: number, perEntry: boolean, leaving: boolean): void {
    const inst = execution(this.state, id);
    if (!inst) return;
    const from = this.streamed.get(id) ?? 0;
    if (upTo <= from) return;
    if (!leaving) this.streamed.set(id, upTo);
    if (perEntry)
      for (let i = from; i < upTo; i++)
        this.emitter.emit('log', {
          processInstanceId: id,
          id: i + 1,
          entry: logEntry(inst, inst.logs[i]!),
        } satisfies StreamedLog);
    this.emitter.emit('logs', { processInstanceId: id, upTo, instance: inst } satisfies LogsAdvanced);
  }

  /** Execution `inst`'s whole log counts as streamed (recovered, or read back: durable). */
  whole(inst: Execution): void {
    this.streamed.set(inst.processInstanceId, inst.logs.length);
  }

  /** Execution `id` left memory: its count is dropped. */
  drop(id: string): void {
    this.streamed.delete(id);
  }

  /**
   * How many log lines of execution `inst` are durable and streamed: a log stream replays up
   * to here, then follows `log` events.
   */
  count(inst: Execution): number {
    // A live execution without a count was started by a step not durable yet (recovered ones
    // and every durable step set one): none of its lines may be sent. One that left the live
    // state is in history, whole.
    return execution(this.state, inst.processInstanceId) === inst
      ? (this.streamed.get(inst.processInstanceId) ?? 0)
      : inst.logs.length;
  }
}
