import type { ExecutionSummary } from '../../src/daemon/state/execution-summary.js';
import type { SegmentEntry } from '../../src/daemon/at-rest/segments/write.js';

/**
 * The mix of issue #60, execution `i`: a third waiting at an input node, a third for a message
 * under a correlation key of its own, a third on a timer. Pure.
 */
export function summaryOf(i: number, id = `exec-${i}`): ExecutionSummary {
  const base = {
    id,
    organization: 'default',
    processId: `flow-${i % 7}`,
    processVersion: '1',
    environment: 'production',
    stateCd: 1,
    root: null,
    parent: i % 11 === 0 ? `exec-${i - 1}` : null,
    startMs: 1_700_000_000_000 + i,
    triggered: i % 5 === 0,
    child: i % 11 === 0,
    active: 0,
  };
  switch (i % 3) {
    case 0:
      return {
        ...base,
        correlationKey: null,
        dueMs: 1_700_086_400_000 + i,
        waits: [{ kind: 'input', node: 'ask', since: 1_700_000_000_000 + i, assignee: i % 2 ? 'ann' : null }],
      };
    case 1:
      return {
        ...base,
        correlationKey: `order-${i}`,
        dueMs: null,
        waits: [
          { kind: 'event', node: 'paid', eventType: 'message', nodeId: 'paid', ref: 'payment', key: `order-${i}` },
        ],
      };
    default:
      return { ...base, correlationKey: null, dueMs: 1_700_600_000_000 + i, waits: [{ kind: 'timer', node: 'wait' }] };
  }
}

/** A document of about `bytes` bytes of JSON for execution `id`. Pure. */
export function documentOf(id: string, i: number, bytes = 1500): string {
  const doc = { processInstanceId: id, n: i, variables: { note: '' } };
  const bare = JSON.stringify(doc).length;
  doc.variables.note = 'x'.repeat(Math.max(0, bytes - bare));
  return JSON.stringify(doc);
}

/** Entries `from` to `to` (exclusive) of the mix, documents of about `bytes` bytes. */
export function entriesOf(from: number, to: number, bytes = 1500, tag = ''): SegmentEntry[] {
  const out: SegmentEntry[] = [];
  for (let i = from; i < to; i++) {
    const id = `exec-${i}`;
    out.push({ id, json: documentOf(id + tag, i, bytes), summary: summaryOf(i, id) });
  }
  return out;
}
