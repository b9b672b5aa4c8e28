import { Box, Text } from 'ink';
import { cut, fit, relativeTime } from '../format.js';
import type { DomainHealth } from '../hooks/use-workers.js';

/** A domain's state as a symbol and a colour: stalled (jobs wait, no worker seen) stands out. */
const VIEW: Record<DomainHealth['state'], { readonly symbol: string; readonly color: string }> = {
  active: { symbol: '●', color: 'green' },
  stalled: { symbol: '✖', color: 'red' },
  idle: { symbol: '○', color: 'gray' },
};

/** What a domain's workers are, in a few words: names (`*` polling now) and when one was last seen. */
export function workersDetail(d: DomainHealth, now: Date): string {
  if (d.workers.length === 0) return 'no worker seen';
  const names = d.workers.map((w) => `${w.worker}${w.polling ? '*' : ''}`).join(', ');
  return `workers ${names} · seen ${relativeTime(d.lastSeen, now)}`;
}

/**
 * Domain health under the triggers: per domain a line (state in a word with a symbol and
 * colour, name and organization, jobs waiting and locked) and under it its workers; at most
 * `rows` lines. Fits `width` columns.
 */
export function DomainsTable(props: {
  readonly domains: readonly DomainHealth[];
  readonly now: Date;
  readonly rows: number;
  readonly width: number;
}) {
  const { domains, now, rows, width } = props;
  const shown = domains.slice(0, Math.max(0, Math.floor(rows / 2)));
  return (
    <Box flexDirection="column">
      {shown.map((d) => {
        const v = VIEW[d.state];
        const jobs = `${d.waiting} waiting · ${d.locked} locked`;
        return (
          <Box key={`${d.organization}/${d.domain}`} flexDirection="column">
            <Text>
              {'  '}
              <Text color={v.color}>{fit(`${v.symbol} ${d.state}`, 10)}</Text>{' '}
              {cut(`${fit(`${d.domain} (${d.organization})`, 30)} ${jobs}`, width - 14)}
            </Text>
            <Text dimColor>{`    ${cut(workersDetail(d, now), width - 5)}`}</Text>
          </Box>
        );
      })}
      {domains.length > shown.length && <Text dimColor>{`  … ${domains.length - shown.length} more`}</Text>}
    </Box>
  );
}
