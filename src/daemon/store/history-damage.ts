/**
 * The damage a file history found since it was opened (history.ts): each finding logged once
 * per file and offset, counted, and the first ones kept for GET /health and `wfx daemon status`.
 */
import { join } from 'node:path';
import type { HistoryFinding } from './history-check.js';
import type { HistoryDamageReport } from './history-store.js';

/** Damage findings kept for the report (the count goes on past them). */
const FINDINGS_KEPT = 100;

/** History's log lines (the daemon passes its pino logger). */
export interface HistoryLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A logger that says nothing (History.open's default). */
export const silentHistoryLogger: HistoryLogger = { warn: () => undefined, error: () => undefined };

/** The findings of one history directory: what `report` was told, once per file and offset. */
export class DamageLog {
  /** Damage reported so far, by file then offset: a bucket indexed again reports it once. */
  private readonly reported = new Map<string, Set<number>>();
  private readonly findings: HistoryFinding[] = [];
  private damagedRecords = 0;

  constructor(
    private readonly dir: string,
    private readonly logger: HistoryLogger,
  ) {}

  /** Logs a damage finding once per file and offset, counts it and keeps it for `damage()`. */
  report(finding: HistoryFinding): void {
    let offsets = this.reported.get(finding.file);
    if (!offsets) this.reported.set(finding.file, (offsets = new Set()));
    if (offsets.has(finding.offset)) return;
    offsets.add(finding.offset);
    if (finding.code !== 'HISTORY_TORN_WRITE') this.damagedRecords++;
    if (this.findings.length < FINDINGS_KEPT) this.findings.push(finding);
    const fields = {
      file: join(this.dir, finding.file),
      offset: finding.offset,
      code: finding.code,
      instanceId: finding.instanceId,
    };
    if (finding.code === 'HISTORY_TORN_WRITE') this.logger.warn(fields, `history: ${finding.message}`);
    else this.logger.error(fields, `history: ${finding.message}; restore the file from a backup`);
  }

  /** The findings so far (History.damage). */
  damage(): HistoryDamageReport {
    return { damagedRecords: this.damagedRecords, findings: [...this.findings] };
  }
}
