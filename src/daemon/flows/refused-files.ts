/**
 * Flow files of the flows directory (`--flows`, `wfx dev`) refused for want of something the
 * daemon registers later (a webhook, an email connection, a domain, a tool flow): published
 * again once a change of that kind is committed, so creating the webhook is enough.
 */
import type { FlowProblemCode } from '../../shared/flow/validate.js';
import type { WfxRecord } from '../state/records.js';
import type { Environment, WfxState } from '../state/state.js';
import type { RecordStore } from '../store/record-store.js';
import type { FileOutcome } from './load-dir.js';

/** Problems a publish finds against the daemon's state, which a later registration can mend. */
const WAITING_CODES: ReadonlySet<FlowProblemCode> = new Set<FlowProblemCode>([
  'UNKNOWN_WEBHOOK',
  'UNKNOWN_CONNECTION',
  'UNKNOWN_DOMAIN',
  'JOB_INPUT_MISMATCH',
  'UNKNOWN_TOOL',
  'TOOL_WITHOUT_INPUTS',
]);

/** Records after which a waiting file may publish: the registrations those problems name. */
const MENDING_RECORDS: ReadonlySet<WfxRecord['type']> = new Set<WfxRecord['type']>([
  'webhook.saved',
  'emailConnection.saved',
  'domain.saved',
  'flow.activated',
]);

/** Whether `o` was refused only for problems a later registration can mend. */
export function waitsForRegistration(o: FileOutcome): boolean {
  return !o.ok && o.error === undefined && o.problems.length > 0 && o.problems.every((p) => WAITING_CODES.has(p.code));
}

/**
 * Follows the store's commits and publishes the waiting files again after a mending record:
 * one pass at a time, a file at a time, each file once per pass. A pass commits only when a file
 * publishes, and a file that publishes leaves the set, so passes end. Not for the flows that
 * arrive over the API: their sender sees the refusal.
 */
export class RefusedFlowFiles {
  private readonly waiting = new Map<string, Environment>();
  private pass: Promise<void> = Promise.resolve();
  private queued = false;
  private closed = false;

  constructor(
    store: RecordStore<WfxState, WfxRecord>,
    /** Reads, validates, publishes, logs and notes here one file (the daemon's publishFile). */
    private readonly publish: (file: string, environment: Environment) => Promise<FileOutcome>,
  ) {
    store.onCommit((records) => {
      if (this.waiting.size === 0 || this.queued || this.closed) return;
      if (!records.some((r) => MENDING_RECORDS.has(r.type))) return;
      this.queued = true;
      // After the commit's listeners (a publish commits, which a listener must not do inline).
      this.pass = this.pass.then(() => new Promise<void>((resolve) => setImmediate(resolve))).then(() => this.retry());
    });
  }

  /** Notes a file's latest outcome: kept to retry if it waits for a registration, else forgotten. */
  note(outcome: FileOutcome, environment: Environment): void {
    if (waitsForRegistration(outcome)) this.waiting.set(outcome.file, environment);
    else this.waiting.delete(outcome.file);
  }

  /** Stops retrying; settles once a pass under way has ended. */
  async close(): Promise<void> {
    this.closed = true;
    await this.pass;
  }

  private async retry(): Promise<void> {
    this.queued = false;
    for (const [file, environment] of [...this.waiting]) {
      if (this.closed) return;
      // A publish of its own (the file changed meanwhile) may have settled it already.
      if (this.waiting.get(file) !== environment) continue;
      await this.publish(file, environment).catch(() => this.waiting.delete(file));
    }
  }
}
