/* /bulk — the bulk operations the session may see (GET /process/bulk), newest first, each with its progress. */
import { useState } from 'preact/hooks';
import type { BulkPage } from '../../shared/api/bulk.js';
import { api } from '../api/http.js';
import { useApi } from '../hooks/use-api.js';
import { useTitle } from '../hooks/use-title.js';
import { BULK_STATE_WORDS, progressWords } from '../model/bulk.js';
import { formatTime } from '../model/format.js';

/** Operations per page read. */
const PAGE = 50;

/** The bulk operations page. */
export default function BulkListPage() {
  const first = useApi<BulkPage>(`/process/bulk?limit=${PAGE}`);
  const [more, setMore] = useState<BulkPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  useTitle('Bulk operations');
  const items = [...(first.data?.items ?? []), ...(more?.items ?? [])];
  const cursor = more ? more.nextCursor : (first.data?.nextCursor ?? null);
  const loadMore = async () => {
    if (!cursor) return;
    try {
      const page = await api<BulkPage>(`/process/bulk?limit=${PAGE}&cursor=${encodeURIComponent(cursor)}`);
      setMore({ items: [...(more?.items ?? []), ...page.items], nextCursor: page.nextCursor });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <>
      <div class="page-head">
        <h1>Bulk operations</h1>
        <a class="button-link" href="/executions">
          Choose executions
        </a>
      </div>
      {(first.error || error) && (
        <p role="alert" class="error-text">{`The bulk operations cannot be read: ${first.error?.message ?? error}`}</p>
      )}
      {!first.data && !first.error && <p class="muted">Loading…</p>}
      {first.data && items.length === 0 && (
        <p class="muted">No bulk operation yet: filter the executions, then Bulk action.</p>
      )}
      {items.length > 0 && (
        <div class="table-scroll">
          <table class="bulk-list">
            <caption class="visually-hidden">Bulk operations, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Operation</th>
                <th scope="col">State</th>
                <th scope="col">Progress</th>
                <th scope="col">Selection</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {items.map((b) => (
                <tr key={b.bulkId}>
                  <th scope="row">
                    <a href={`/bulk/${encodeURIComponent(b.bulkId)}`}>{b.operation}</a>{' '}
                    <span class="muted">{b.bulkId}</span>
                  </th>
                  <td>{BULK_STATE_WORDS[b.state]}</td>
                  <td>{progressWords(b)}</td>
                  <td>
                    <code>{JSON.stringify(b.query)}</code>
                  </td>
                  <td>
                    <time dateTime={b.createdAt}>{formatTime(b.createdAt)}</time>
                    {` by ${b.by}`}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor !== null && (
        <button type="button" class="load-more" onClick={() => void loadMore()}>
          Load more
        </button>
      )}
    </>
  );
}
