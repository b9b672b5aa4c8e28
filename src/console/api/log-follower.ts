/*
 * Follows an execution's log stream (GET /process/instance/{id}/logs?follow=true). After a drop
 * EventSource reconnects by itself, sending Last-Event-ID, and the daemon resumes after that
 * entry; when EventSource gives up (the daemon refused it) the stream is opened anew after a
 * pause and replays from the start. Either way each entry is delivered once (model/log.ts keeps
 * entries by sequence). `end` closes the stream for good.
 */
import type { LogEntry } from '../../shared/api/process.js';
import type { LogArrival } from '../model/log.js';

/** The part of EventSource the follower uses (a test passes its own). */
export interface LogSource {
  readonly readyState: number;
  onmessage: ((e: MessageEvent<string>) => void) | null;
  onerror: ((e: Event) => void) | null;
  addEventListener(type: 'end', listener: () => void): void;
  close(): void;
}

/** What a LogFollower needs. */
export interface LogFollowerOptions {
  readonly open: (url: string) => LogSource;
  /** Entries as they come (a batch per call). */
  readonly entries: (arrivals: readonly LogArrival[]) => void;
  /** The stream said `end`. */
  readonly ended: () => void;
  /** EventSource gave up (the session may have lapsed: the caller checks it). */
  readonly refused: () => void;
  readonly setTimer: (fn: () => void, ms: number) => unknown;
  readonly clearTimer: (handle: unknown) => void;
  /** Milliseconds before a refused stream is opened again. */
  readonly reopenMs: number;
}

/** EventSource.CLOSED. */
const CLOSED = 2;

/** One execution's log, followed until `end` or `stop()`. */
export class LogFollower {
  private source: LogSource | null = null;
  private timer: unknown = null;
  private done = false;

  constructor(
    private readonly url: string,
    private readonly options: LogFollowerOptions,
  ) {
    this.open();
  }

  private open(): void {
    const source = this.options.open(this.url);
    this.source = source;
    source.onmessage = (e) => {
      let entry: LogEntry;
      try {
        entry = JSON.parse(e.data) as LogEntry;
      } catch {
        return;
      }
      this.options.entries([{ seq: Number(e.lastEventId), entry }]);
    };
    source.addEventListener('end', () => {
      this.stop();
      this.options.ended();
    });
    source.onerror = () => {
      if (this.done || source !== this.source || source.readyState !== CLOSED) return;
      this.source = null;
      this.options.refused();
      this.timer = this.options.setTimer(() => {
        this.timer = null;
        if (!this.done) this.open();
      }, this.options.reopenMs);
    };
  }

  /** Closes the stream and opens no other. */
  stop(): void {
    this.done = true;
    this.source?.close();
    this.source = null;
    if (this.timer !== null) this.options.clearTimer(this.timer);
    this.timer = null;
  }
}
