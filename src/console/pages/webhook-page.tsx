/*
 * /triggers/webhooks/:name — a webhook registration's delivery log (ADMIN), kept up to date by
 * its stream (GET .../deliveries/stream); a delivery opens with its headers, body and Redeliver.
 */
import { useLocation, useRoute } from 'preact-iso/router';
import { useEffect } from 'preact/hooks';
import { calls, streams } from '../../shared/api/calls/index.js';
import { DataTable } from '../components/data-table.js';
import { DeliveryPanel } from '../components/delivery-detail.js';
import { ReadState } from '../components/read-state.js';
import { useApi } from '../hooks/use-api.js';
import { useTitle } from '../hooks/use-title.js';
import { formatTime } from '../model/format.js';
import { verdictWord } from '../model/triggers.js';

/** Reloads `reload` at each delivery the registration's stream sends (the stream reconnects by itself). */
function useDeliveryStream(name: string, reload: () => void): void {
  useEffect(() => {
    const source = new EventSource(streams.deliveries(name));
    source.addEventListener('delivery', () => reload());
    return () => source.close();
  }, [name, reload]);
}

/** The webhook page. */
export default function WebhookPage() {
  const { params, query } = useRoute();
  const { route } = useLocation();
  const name = params.name ?? '';
  const open = query.delivery ?? null;
  const log = useApi(calls.webhooks.deliveries(name));
  useDeliveryStream(name, log.reload);
  useTitle(`Webhook ${name}`);
  const items = log.data?.items ?? [];
  const show = (id: string) =>
    route(`/triggers/webhooks/${encodeURIComponent(name)}?delivery=${encodeURIComponent(id)}`);
  return (
    <>
      <div class="page-head">
        <h1>{`Webhook ${name}`}</h1>
        <a href="/triggers">All triggers</a>
      </div>
      <ReadState read={log} what="The delivery log" empty={items.length === 0 && 'No deliveries yet.'} />
      {log.data && log.data.refused > 0 && (
        <p class="muted">{`${log.data.refused} deliveries refused in all (the log keeps the last ones).`}</p>
      )}
      <div class={open ? 'execution-grid' : undefined}>
        {items.length > 0 && (
          <DataTable
            class="deliveries"
            caption={`Deliveries of ${name}, newest first`}
            columns={['Received', 'Event', 'Verdict', 'Started', 'Why nothing started']}
          >
            {items.map((d) => (
              <tr key={d.deliveryId} aria-current={d.deliveryId === open ? 'true' : undefined}>
                <th scope="row">
                  <button
                    type="button"
                    class="link-button"
                    onClick={() => show(d.deliveryId)}
                    aria-label={`Show delivery ${d.deliveryId} received ${formatTime(d.receivedAt)}`}
                  >
                    {formatTime(d.receivedAt)}
                  </button>
                </th>
                <td>{'pending' in d ? '—' : (d.eventType ?? '—')}</td>
                <td>{verdictWord(d)}</td>
                <td>
                  {'pending' in d || d.startedInstanceIds.length === 0 ? (
                    <span class="muted">—</span>
                  ) : (
                    d.startedInstanceIds.map((id) => (
                      <a key={id} href={`/executions/${encodeURIComponent(id)}`}>
                        {id}
                      </a>
                    ))
                  )}
                </td>
                <td>{'pending' in d ? '' : (d.reason ?? (d.redeliveryOf ? `redelivery of ${d.redeliveryOf}` : ''))}</td>
              </tr>
            ))}
          </DataTable>
        )}
        {open && <DeliveryPanel key={open} webhook={name} deliveryId={open} onRedelivered={log.reload} />}
      </div>
    </>
  );
}
