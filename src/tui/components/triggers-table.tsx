import { Box, Text } from 'ink';
import { cut, fit, relativeTime, triggerStateView } from '../format.js';
import type { TriggerHealth } from '../hooks/use-triggers.js';
import type { ListTableProps } from './list-table-props.js';

/** What a trigger is, in a few words: a schedule's cron, zone and missed-runs policy; a webhook's registration; an email trigger's connection. */
export function triggerDetail(t: TriggerHealth): string {
  switch (t.type) {
    case 'schedule':
      return `cron ${t.cron} ${t.timezone} · missedRuns: ${t.missedRuns}${t.nextFire ? ` · next ${t.nextFire.slice(0, 16)}Z` : ''}`;
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

/** Lines one trigger takes: its row, its detail, and its last error when it has one. */
const linesOf = (t: TriggerHealth) => (t.lastError ? 3 : 2);

/**
 * Trigger health: one row per trigger (state in a word with a symbol and colour, type, flow and
 * version, environment, last and next fire relative to `now`), under it the trigger's detail,
 * and a failing or disabled trigger's last error. Fits 80 columns; the flow column grows wider.
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
            {t.lastError && (
              <Text
                color={v.color}
              >{`    ${cut(`${t.state === 'failing' ? 'last error' : 'why'}: ${t.lastError}`, width - 5)}`}</Text>
            )}
          </Box>
        );
      })}
    </Box>
  );
}
