/* Words for the API's codes, shared by the CLI and the TUI. */
import type { NodeView } from '../shared/api/index.js';

/** `stateCd` in words, by code (STATE). */
export const STATE_NAMES = ['running', 'completed', 'failed', 'cancelled'] as const;
/** `statusCd` in words, by code (STATUS). */
export const STATUS_NAMES = ['active', 'waiting', 'completed', 'failed', 'cancelled', 'timed out'] as const;

/** What a waiting node waits for, in a few words; '' for a node that does not wait. Pure. */
export function waitingFor(n: NodeView): string {
  const w = n.wait;
  if (!w || n.statusCd !== 1) return '';
  const child = n.childInstanceIds?.at(-1);
  switch (w.kind) {
    case 'input':
      return `input ${w.inputType ?? ''}${w.formTitle ? `: ${w.formTitle}` : ''}`;
    case 'event':
      return `${w.eventType ?? 'message'} ${w.messageRef ?? ''}`;
    case 'timer':
      return `timer until ${w.dueAt ?? '?'}`;
    case 'child':
      return `child ${child ?? '?'}`;
    case 'loop':
      return `iterations ${w.state?.done ?? 0}${w.state?.items ? `/${w.state.items.length}` : ''} done, ${w.state?.running ?? 0} running${child ? ` (latest ${child})` : ''}`;
    case 'tools': {
      // The calls whose executions run now (the others wait their turn or have ended).
      const running = (n.agent?.calls ?? []).filter((c) => c.ok === null && c.childInstanceId !== null);
      return running.length === 0
        ? 'tools'
        : `tool${running.length === 1 ? '' : 's'} ${running.map((c) => c.name).join(', ')}`;
    }
    case 'queue':
      return 'queued: a slot of the concurrency limit';
    default:
      return (w as { kind: string }).kind;
  }
}
