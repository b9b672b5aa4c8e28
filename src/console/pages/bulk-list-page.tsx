/* /bulk — the bulk operations the session may see (GET /process/bulk), newest first, each with its progress. */
import { calls } from '../../shared/api/calls/index.js';
import { LoadMore } from '../components/load-more.js';
import { ReadTable } from '../components/read-table.js';
import { usePages } from '../hooks/use-pages.js';
import { useTitle } from '../hooks/use-title.js';
import { BULK_STATE_WORDS, progressWords } from '../model/bulk.js';
import { formatTime } from '../model/format.js';

/** Operations per page read. */
const PAGE = 50;

/** The bulk operations page. */
export default function BulkListPage() {
  const list = usePages((cursor) => calls.bulk.list({ limit: PAGE, cursor }));
  useTitle('Bulk operations');
  const { items } = list;
  return (
    <>
      <div class="page-head">
        <h1>Bulk operations</h1>
        <a class="button-link" href="/executions">
          Choose executions
        </a>
      </div>
      <ReadTable
        read={list}
        items={items}
        what="The bulk operations"
        empty="No bulk operation yet: filter the executions, then Bulk action."
        class="bulk-list"
        caption="Bulk operations, newest first"
        columns={['Operation', 'State', 'Progress', 'Selection', 'Created']}
        row={(b) => (
          <tr key={b.bulkId}>
            <th scope="row">
              <a href={`/bulk/${encodeURIComponent(b.bulkId)}`}>{b.operation}</a> <span class="muted">{b.bulkId}</span>
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
        )}
      />
      {list.more && <LoadMore onLoad={list.loadMore} />}
    </>
  );
}
