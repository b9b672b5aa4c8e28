/* One webhook delivery: its verdict, what it started, its kept headers and body, and Redeliver. */
import { useState } from 'preact/hooks';
import { calls } from '../../shared/api/calls/index.js';
import type { DeliveryRecord } from '../../shared/api/webhooks.js';
import { send } from '../api/http.js';
import { useApi } from '../hooks/use-api.js';
import { formatTime } from '../model/format.js';
import { redeliverable, verdictWord } from '../model/triggers.js';
import { ConfirmDialog } from './confirm-dialog.js';

/** Props of DeliveryPanel. */
type Props = {
  readonly webhook: string;
  readonly deliveryId: string;
  /** Called once a redelivery is recorded (the log reloads). */
  readonly onRedelivered: () => void;
};

/** Links to executions by id. */
function Started({ ids }: { readonly ids: readonly string[] }) {
  if (ids.length === 0) return <span class="muted">nothing</span>;
  return (
    <ul class="started-list">
      {ids.map((id) => (
        <li key={id}>
          <a href={`/executions/${encodeURIComponent(id)}`}>{id}</a>
        </li>
      ))}
    </ul>
  );
}

/** The panel of delivery `deliveryId` of `webhook`. */
export function DeliveryPanel({ webhook, deliveryId, onRedelivered }: Props) {
  const detail = useApi(calls.webhooks.delivery(webhook, deliveryId));
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<DeliveryRecord | null>(null);
  const [error, setError] = useState<string | null>(null);
  const d = detail.data;
  const redeliver = async () => {
    setBusy(true);
    setError(null);
    try {
      const record = await send(calls.webhooks.redeliver(webhook, deliveryId));
      setResult(record);
      onRedelivered();
    } catch (err) {
      const e = err as { code?: string; message?: string };
      setError(`${e.code ?? 'ERROR'}: ${e.message ?? String(err)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel delivery-panel" aria-labelledby="delivery-title">
      <h2 id="delivery-title">{`Delivery ${deliveryId}`}</h2>
      {detail.error && <p role="alert" class="error-text">{`The delivery cannot be read: ${detail.error.message}`}</p>}
      {!d && !detail.error && <p class="muted">Loading…</p>}
      {d && (
        <>
          <dl class="facts">
            <dt>Received</dt>
            <dd>{formatTime(d.receivedAt)}</dd>
            <dt>Endpoint</dt>
            <dd>{d.environment}</dd>
            <dt>Event</dt>
            <dd>{[d.eventType ?? '—', d.eventId ?? ''].join(' ').trim()}</dd>
            <dt>Verdict</dt>
            <dd>{verdictWord(d)}</dd>
            {d.redeliveryOf && (
              <>
                <dt>Redelivery of</dt>
                <dd>{`${d.redeliveryOf}, by ${d.by ?? 'unknown'}`}</dd>
              </>
            )}
            <dt>Started</dt>
            <dd>
              <Started ids={d.startedInstanceIds} />
            </dd>
            {d.reason && (
              <>
                <dt>Why nothing started</dt>
                <dd>{d.reason}</dd>
              </>
            )}
          </dl>
          <h3>Headers</h3>
          {d.headers ? (
            <table class="headers">
              <caption class="visually-hidden">
                Headers of the delivery (signature and credential headers are never kept)
              </caption>
              <tbody>
                {Object.entries(d.headers).map(([k, v]) => (
                  <tr key={k}>
                    <th scope="row">
                      <code>{k}</code>
                    </th>
                    <td>
                      <code>{v}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p class="muted">Not kept.</p>
          )}
          <h3>Body</h3>
          {d.payload ? (
            <pre class="json" tabIndex={0} aria-label="Body of the delivery">
              {d.payload.text ?? `(not UTF-8; base64) ${d.payload.base64}`}
            </pre>
          ) : (
            <p class="muted">{d.body?.preview !== undefined ? `Not kept; it began: ${d.body.preview}` : 'Not kept.'}</p>
          )}
          {redeliverable(d) && (
            <p>
              <button type="button" onClick={() => setAsking(true)} disabled={busy}>
                Redeliver
              </button>
            </p>
          )}
          <ConfirmDialog
            open={asking}
            title="Redeliver this delivery?"
            message="Its payload is processed again as a new delivery: the flows subscribed now start, without the duplicate check."
            confirm="Redeliver"
            tone="primary"
            dismiss="Keep it"
            onAnswer={(yes) => {
              setAsking(false);
              if (yes) void redeliver();
            }}
          />
          <div role="status" aria-live="polite">
            {result && (
              <div class="notice">
                <p>{`Redelivered as ${result.deliveryId}: ${result.startedInstanceIds.length > 0 ? 'started' : `started nothing${result.reason ? ` (${result.reason})` : ''}`}`}</p>
                {result.startedInstanceIds.length > 0 && <Started ids={result.startedInstanceIds} />}
              </div>
            )}
          </div>
          {error && (
            <p role="alert" class="error-text">
              {error}
            </p>
          )}
        </>
      )}
    </section>
  );
}
