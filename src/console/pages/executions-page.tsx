/*
 * /executions — every execution the session may see, newest first, filtered by the page's
 * query string, a page at a time ("Load more"), children folded under their parent; kept live
 * from the one event stream: an event of a row on screen re-reads it, a start that matches the
 * filters is added (model/live-list.ts), the reads batched (model/row-reads.ts).
 */
import { useLocation } from 'preact-iso/router';
import type { BulkView } from '../../shared/api/bulk.js';
import { useCallback, useContext, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { calls } from '../../shared/api/calls/index.js';
import { ApiError, asError, send } from '../api/http.js';
import { BulkDialog } from '../components/bulk-dialog.js';
import { DataTable } from '../components/data-table.js';
import { LoadMore } from '../components/load-more.js';
import { ExecutionRows } from '../components/execution-rows.js';
import { FILTERS_FORM_ID, FiltersForm } from '../components/filters-form.js';
import { EventsContext } from '../components/events-context.js';
import { useApi } from '../hooks/use-api.js';
import { useNow } from '../hooks/use-now.js';
import { useMay } from '../hooks/use-session.js';
import { useTitle } from '../hooks/use-title.js';
import { bulkQueryOf, selectionWords } from '../model/bulk.js';
import { filtersFromQuery, filtersToQuery, hasFilters, type Filters } from '../model/filters.js';
import { applyRead, readFor, type ListRows } from '../model/live-list.js';
import { RowReads } from '../model/row-reads.js';
import { summaryOf } from '../model/summary.js';

/** Rows per page read. */
const PAGE = 50;

/** `/` anywhere but in a field focuses the filters' first field. */
function useSlashFocus(): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
      const first = document.querySelector<HTMLElement>(`#${FILTERS_FORM_ID} input, #${FILTERS_FORM_ID} select`);
      if (!first) return;
      e.preventDefault();
      first.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}

/** The executions list. */
export default function ExecutionsPage() {
  const location = useLocation();
  const events = useContext(EventsContext);
  const queryText = new URLSearchParams(location.query).toString();
  const filters = useMemo(() => filtersFromQuery(new URLSearchParams(queryText)), [queryText]);
  const [rows, setRows] = useState<ListRows | null>(null);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [loadingChildren, setLoadingChildren] = useState<ReadonlySet<string>>(new Set());
  const [missed, setMissed] = useState(0);
  const [generation, setGeneration] = useState(0);
  const rowsRef = useRef(rows);
  rowsRef.current = rows;
  const flows = useApi(calls.flows.list());
  // Bulk operations need WORKFLOW_PUBLISH; the daemon refuses them anyway.
  const mayBulk = useMay('WORKFLOW_PUBLISH');
  const [bulkOpen, setBulkOpen] = useState(false);
  useTitle('Executions');
  useSlashFocus();

  useEffect(() => {
    const controller = new AbortController();
    setRows(null);
    setError(null);
    setMissed(0);
    send(calls.instances.search({ ...bulkQueryOf(filters), limit: PAGE }), { signal: controller.signal })
      .then((page) => setRows({ items: page.items, nextCursor: page.nextCursor, children: {} }))
      .catch((err: unknown) => {
        if (!controller.signal.aborted) setError(asError(err));
      });
    return () => controller.abort();
  }, [filters, generation]);

  // Durations of running executions move on.
  const now = useNow(rows?.items.some((e) => e.state === 'RUNNING') ?? false);

  useEffect(() => {
    const reads = new RowReads({
      read: (read) => {
        send(calls.instances.get(read.id))
          .then((v) => setRows((r) => (r ? applyRead(r, filters, read, summaryOf(v)) : r)))
          .catch(() => undefined);
      },
      missed: (n) => setMissed((m) => m + n),
      intervalMs: 1000,
      maxProbes: 20,
      schedule: {
        now: () => performance.now(),
        setTimer: (fn, ms) => setTimeout(fn, ms),
        clearTimer: (h) => clearTimeout(h as number),
      },
    });
    const unsubscribe = events.subscribe((e) => {
      const current = rowsRef.current;
      if (!current) return;
      const read = readFor(current, filters, e as { type: string; processInstanceId: string; processId?: string });
      if (read) reads.request(read);
    });
    return () => {
      unsubscribe();
      reads.dispose();
    };
  }, [events, filters]);

  const loadMore = async () => {
    if (!rows?.nextCursor) return;
    setLoadingMore(true);
    try {
      const page = await send(
        calls.instances.search({ ...bulkQueryOf(filters), limit: PAGE, cursor: rows.nextCursor }),
      );
      setRows((r) => {
        if (!r) return r;
        const seen = new Set(r.items.map((e) => e.processInstanceId));
        return {
          ...r,
          items: [...r.items, ...page.items.filter((e) => !seen.has(e.processInstanceId))],
          nextCursor: page.nextCursor,
        };
      });
    } catch (err) {
      setError(asError(err));
    } finally {
      setLoadingMore(false);
    }
  };

  const toggle = useCallback((id: string, open: boolean) => {
    if (!open) {
      setRows((r) => {
        if (!r) return r;
        const { [id]: _closed, ...children } = r.children;
        return { ...r, children };
      });
      return;
    }
    setLoadingChildren((s) => new Set(s).add(id));
    send(calls.instances.search({ parentId: id, limit: PAGE }))
      .then((page) => setRows((r) => (r ? { ...r, children: { ...r.children, [id]: page.items } } : r)))
      .catch((err: unknown) => setError(asError(err)))
      .finally(() =>
        setLoadingChildren((s) => {
          const next = new Set(s);
          next.delete(id);
          return next;
        }),
      );
  }, []);

  const apply = (f: Filters) => location.route(`/executions${filtersToQuery(f)}`);
  const flowChoices = (flows.data?.items ?? []).map((f) => ({ processId: f.processId, name: f.name }));
  return (
    <>
      <div class="page-head">
        <h1>Executions</h1>
        {mayBulk && (
          <button type="button" onClick={() => setBulkOpen(true)}>
            Bulk action…
          </button>
        )}
      </div>
      {mayBulk && (
        <BulkDialog
          open={bulkOpen}
          query={bulkQueryOf(filters)}
          selection={selectionWords(filters)}
          versions={flows.data?.items.find((f) => f.processId === filters.processId)?.versions.map((v) => v.version)}
          onClose={() => setBulkOpen(false)}
          onStarted={(v: BulkView) => location.route(`/bulk/${encodeURIComponent(v.bulkId)}`)}
        />
      )}
      <FiltersForm key={queryText} filters={filters} flows={flowChoices} onApply={apply} />
      {missed > 0 && (
        <p class="notice" role="status">
          {`${missed} more execution${missed === 1 ? '' : 's'} started than could be shown live. `}
          <button type="button" class="link-button" onClick={() => setGeneration((g) => g + 1)}>
            Reload the list
          </button>
        </p>
      )}
      {error && (
        <p role="alert" class="error-text">
          {error instanceof ApiError && error.status === 404
            ? 'This daemon does not list executions (GET /process/instances); update wfx.'
            : `The executions cannot be read: ${error.message}`}
        </p>
      )}
      {!rows && !error && <p class="muted">Loading…</p>}
      {rows && (
        <>
          <DataTable
            class="executions"
            caption={hasFilters(filters) ? 'Executions matching the filters, newest first' : 'Executions, newest first'}
            columns={[
              { hidden: 'Children' },
              'Execution',
              'Flow',
              'Version',
              'Environment',
              'State',
              'Started',
              'Took',
              'Correlation key, search',
              'Failure',
            ]}
          >
            <ExecutionRows
              items={rows.items}
              children={rows.children}
              loading={loadingChildren}
              onToggle={toggle}
              now={now}
            />
          </DataTable>
          {rows.items.length === 0 && (
            <p class="muted">{hasFilters(filters) ? 'No execution matches these filters.' : 'No executions yet.'}</p>
          )}
          {rows.nextCursor !== null && <LoadMore onLoad={loadMore} loading={loadingMore} />}
        </>
      )}
    </>
  );
}
