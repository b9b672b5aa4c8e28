import { Box, Text } from 'ink';
import { cut, fit, relativeTime, triggerStateView } from '../format.js';
import type { TriggerHealth } from '../hooks/use-triggers.js';
import type { ListTableProps } from './list-table-props.js';

/** What a trigger is, in a few words: a schedule's cron, zone and missed-runs policy; a webhook's registration; an email trigger's connection. */
export function triggerDetail(t: TriggerHealth): string {
  switch (t.type) {
    case 'schedule': {
      const overlap = t.overlap !== 'allow' ? ` · overlap: ${t.overlap}` : '';
      const waiting = t.waiting > 0 ? ` · ${t.waiting} waiting` : '';
      const next = t.nextFire ? ` · next ${t.nextFire.slice(0, 16)}Z` : '';
      return `cron ${t.cron} ${t.timezone} · missedRuns: ${t.missedRuns}${overlap}${waiting}${next}`;
    }
    case 'webhook':
      return `webhook ${t.webhook}`;
    case 'email':
      return `email connection ${t.connection}`;
    case 'on-demand':
      return `on demand${t.description ? `: ${t.description}` : ''}`;
    case 'execution':
      return `when ${t.watchedProcessId ?? 'any other flow'} ends ${t.states.join('|')}`;
  }
}

/** Why a trigger does not fire, when its health says: its last error, or that a schedule is paused. */
export function notFiring(t: TriggerHealth): string | null {
  if (t.lastError) return `${t.state === 'failing' ? 'last error' : 'why'}: ${t.lastError}`;
  if (t.type === 'schedule' && t.state === 'disabled')
    return 'paused: p resumes it (or wfx schedules resume FLOW --env ENV)';
  return null;
}

/** Lines one trigger takes: its row, its detail, and why it does not fire when it says. */
const linesOf = (t: TriggerHealth) => (notFiring(t) !== null ? 3 : 2);

/**
 * Trigger health: one row per trigger (state in a word with a symbol and colour, type, flow and
 * version, environment, last and next fire relative to `now`), under it the trigger's detail,
 * and why a failing, disabled or paused trigger does not fire. Fits 80 columns; the flow column grows wider.
 */
export function TriggersTable(props: ListTableProps & { readonly triggers: readonly TriggerHealth[] }) {
  const { triggers, selected, now, rows, width } = props;
  const flowW = Math.min(40, Math.max(16, width - 57));
  let first = 0;
  const span = (from: number, to: number) => triggers.slice(from, to + 1).reduce((n, t) => n + linesOf(t), 0);
  while (first < selected && span(first, selected) > rows) first++;
  const visible: TriggerHealth[] = [];
  for (let i = first, used = 0; i < triggers.length && used + linesOf(triggers[i]!) <= rows; i++) {
    visible.push(triggers[i]!);
    used += linesOf(triggers[i]!);
  }
  return (
    <Box flexDirection="column">
      <Text
        bold
      >{`  ${fit('STATE', 10)} ${fit('TYPE', 8)} ${fit('FLOW', flowW)} ${fit('ENV', 11)} ${fit('LAST FIRE', 10)} NEXT FIRE`}</Text>
      {triggers.length === 0 && (
        <Text dimColor> no triggers: no active flow version has a schedule, webhook or email trigger</Text>
      )}
      {visible.map((t, i) => {
        const at = first + i === selected;
        const v = triggerStateView(t.state);
        return (
          <Box key={`${first + i}`} flexDirection="column">
            <Text inverse={at}>
              {at ? '›' : ' '} <Text color={v.color}>{fit(`${v.symbol} ${v.word}`, 10)}</Text> {fit(t.type, 8)}{' '}
              {fit(cut(`${t.flowName} v${t.version}`, flowW), flowW)} {fit(t.environment, 11)}{' '}
              {fit(relativeTime(t.lastFire, now), 10)} {relativeTime(t.nextFire, now)}
            </Text>
            <Text dimColor>{`    ${cut(triggerDetail(t), width - 5)}`}</Text>
            {notFiring(t) !== null && <Text color={v.color}>{`    ${cut(notFiring(t)!, width - 5)}`}</Text>}
          </Box>
        );
      })}
    </Box>
  );
}
