/**
 * The step's sweep input: kept messages, remembered message ids and memory entries whose time
 * is up are removed (an expired memory entry already reads as missing; this frees it).
 */
import { expiredMemoryEntries } from '../../state/memory.js';
import type { Step } from './step.js';

/** The input of this file (index.ts, StepInput): at most `memoryBatch` memory entries go per sweep. */
export interface SweepInput {
  readonly kind: 'sweep';
  readonly memoryBatch: number;
}

/** Removes what expired by the step's clock; answers how many records that wrote. */
export function sweepExpired(s: Step, input: SweepInput): number {
  const now = s.now.toISOString();
  const { state } = s;
  const before = s.records.length;
  for (const m of Object.values(state.messages).filter((m) => m.expiresAt <= now))
    s.emit({ type: 'message.removed', id: m.id });
  for (const [key] of Object.entries(state.messageIds).filter(([, until]) => until <= now))
    s.emit({ type: 'messageId.expired', key });
  for (const at of expiredMemoryEntries(state.memory, now, input.memoryBatch))
    s.emit({ type: 'memory.written', ...at, entry: null });
  return s.records.length - before;
}
