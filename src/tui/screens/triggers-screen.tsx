import { Box, Text, useInput } from 'ink';
import { useRef, useState } from 'react';
import { KeyBar } from '../components/key-bar.js';
import { TriggersTable } from '../components/triggers-table.js';
import { DomainsTable } from '../components/domains-table.js';
import { useTriggers } from '../hooks/use-triggers.js';
import { useWorkers } from '../hooks/use-workers.js';
import { useWidth } from '../hooks/use-width.js';
import { SHELL_KEYS, type ScreenProps } from './screen.js';
import { cursorAt, moveCursor } from '../cursor.js';
import { errorText } from '../error-text.js';
import { useNotice } from '../hooks/use-notice.js';
import type { ScheduleHealth } from '../../shared/api/index.js';
import { listTable } from '../components/list-table-props.js';
import { ReadError } from '../components/read-error.js';

/**
 * The health screen: every trigger of the active flow versions with its state, last and next
 * fire and why it does not fire (`p` pauses or resumes a schedule); under it each domain's jobs and workers (a domain whose jobs wait
 * with no worker seen is `stalled`); re-read when executions change and every `refreshMs` (5 s).
 */
export function TriggersScreen(props: ScreenProps & { readonly refreshMs?: number }) {
  const { client, rows, now, active, changes, refreshMs } = props;
  const width = useWidth();
  const { data, error, reload } = useTriggers(client, changes, refreshMs);
  const [notice, setNotice] = useNotice(active);
  const triggers = data ?? [];
  // Domains are shown when the credential may read them; their failure leaves the triggers alone.
  const domains = useWorkers(client, changes).data ?? [];
  const stalled = domains.filter((d) => d.state === 'stalled').length;
  const domainRows = domains.length === 0 ? 0 : 1 + 2 * Math.min(domains.length, 3);
  const [selected, setSelected] = useState(0);
  const latest = useRef({ triggers, selected });
  latest.current = { triggers, selected };
  /** Pauses the selected schedule's flow's schedules in its environment, or resumes them. */
  const toggle = (t: ScheduleHealth) => {
    const resume = t.state === 'disabled';
    const body = { environment: t.environment };
    const what = `the schedules of ${t.flowName} in ${t.environment}`;
    (resume ? client.schedules.resume(t.processId, body) : client.schedules.pause(t.processId, body)).then(
      () => {
        setNotice(resume ? `${what} fire again` : `paused ${what}`);
        reload();
      },
      (err: unknown) => setNotice(`${what}: not ${resume ? 'resumed' : 'paused'}: ${errorText(err)}`),
    );
  };
  useInput(
    (input, key) => {
      const { triggers, selected } = latest.current;
      const at = triggers[cursorAt(selected, triggers.length)];
      if (input === 'p' && at?.type === 'schedule' && at.state !== 'failing') return toggle(at);
      setSelected((s) => moveCursor(s, triggers.length, input, key));
    },
    { isActive: active },
  );

  const count = (state: string) => triggers.filter((t) => t.state === state).length;
  return (
    <Box flexDirection="column">
      <ReadError error={error} what="trigger health" forbidden="which trigger health needs" />
      {data ? (
        <>
          <Text>
            {triggers.length} trigger{triggers.length === 1 ? '' : 's'} ·{' '}
            <Text color="green">● {count('active')} active</Text> ·{' '}
            <Text color="red">✖ {count('failing')} failing</Text> ·{' '}
            <Text color="gray">○ {count('disabled')} disabled</Text>
          </Text>
          <TriggersTable
            triggers={triggers}
            {...listTable(selected, triggers.length, now, Math.max(3, rows - 5 - domainRows - (notice ? 1 : 0)), width)}
          />
          {domains.length > 0 && (
            <>
              <Text>
                {domains.length} domain{domains.length === 1 ? '' : 's'} of workers
                {stalled > 0 && <Text color="red"> · ✖ {stalled} stalled: jobs wait and no worker was seen</Text>}
              </Text>
              <DomainsTable domains={domains} now={now} rows={domainRows - 1} width={width} />
            </>
          )}
        </>
      ) : (
        !error && <Text dimColor>loading trigger health…</Text>
      )}
      {notice && <Text dimColor>{notice}</Text>}
      <KeyBar keys={[['↑↓', 'move'], ['p', 'pause/resume a schedule'], ...SHELL_KEYS]} />
    </Box>
  );
}
