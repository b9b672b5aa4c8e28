/*
 * /tasks — the inbox: the input nodes and user tasks waiting for a person in the session's
 * organization (GET /process/tasks), filtered by flow, words of the title and age, each with
 * how long it has waited and when it is due (a live countdown); kept current by the page's
 * event stream. /tasks/ID/NODE is the same page with that task's form open: a link to send to
 * whoever should answer.
 */
import { useLocation, useRoute } from 'preact-iso/router';
import { useContext, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { calls } from '../../shared/api/calls/index.js';
import { EventsContext } from '../components/events-context.js';
import { ReadTable } from '../components/read-table.js';
import { TaskPanel } from '../components/task-panel.js';
import { useApi } from '../hooks/use-api.js';
import { useMay, useSession } from '../hooks/use-session.js';
import { actorOfSession, claimWords } from '../model/claim.js';
import { useNow } from '../hooks/use-now.js';
import { useThrottled } from '../hooks/use-throttled.js';
import { useTitle } from '../hooks/use-title.js';
import { formatDuration, formatTime } from '../model/format.js';
import { dueWords } from '../model/task-form.js';
import {
  AGES,
  eventTouchesTasks,
  filterTasks,
  taskFiltersFromQuery,
  taskFiltersToQuery,
  taskHref,
  type TaskFilters,
} from '../model/task-list.js';

/** The most tasks one read shows (the API's page cap). */
const LIMIT = 1000;

/** The inbox (see the top of this file). */
export default function TasksPage() {
  const location = useLocation();
  const { params } = useRoute();
  const events = useContext(EventsContext);
  const queryText = new URLSearchParams(location.query).toString();
  const filters = useMemo(() => taskFiltersFromQuery(new URLSearchParams(queryText)), [queryText]);
  const [q, setQ] = useState(filters.q);
  useEffect(() => setQ(filters.q), [filters.q]);
  const tasks = useApi(calls.tasks.list({ limit: LIMIT, processId: filters.processId || undefined }));
  const flows = useApi(calls.flows.list());
  const mayExecute = useMay('WORKFLOW_EXECUTE');
  const me = actorOfSession(useSession().data);
  const now = useNow(true);
  // Each reload walks the daemon's live executions: at most one a second per open inbox.
  const reload = useThrottled(tasks.reload, 1000);
  // While a read is under way its answer is unknown: every event may concern it (task-list.ts).
  const listed = useRef<ReadonlySet<string> | null>(null);
  listed.current = tasks.loading ? null : new Set((tasks.data?.items ?? []).map((t) => t.processInstanceId));
  useEffect(
    () =>
      events.subscribe((e) => {
        if (eventTouchesTasks(e, tasks.reading() ? null : listed.current)) reload();
      }),
    [events, reload, tasks.reading],
  );
  const open = params.id && params.nodeId ? { processInstanceId: params.id, nodeId: params.nodeId } : null;
  useTitle(open ? `Task ${open.nodeId}` : 'Tasks');

  const go = (f: TaskFilters, replace = false) => location.route(`${location.path}${taskFiltersToQuery(f)}`, replace);
  const shown = filterTasks(tasks.data?.items ?? [], filters, now);
  const openTask = open
    ? tasks.data?.items.find((t) => t.processInstanceId === open.processInstanceId && t.nodeId === open.nodeId)
    : undefined;
  const total = tasks.data?.items.length ?? 0;
  return (
    <>
      <div class="page-head">
        <h1>Tasks</h1>
        {tasks.data && (
          <span class="muted" role="status">
            {shown.length === total
              ? `${total} waiting${tasks.data.nextCursor ? ` (the oldest ${LIMIT}; choose a flow to see others)` : ''}`
              : `${shown.length} of ${total} waiting`}
          </span>
        )}
      </div>
      <form
        class="filters task-filters"
        role="search"
        aria-label="Filter the tasks"
        onSubmit={(e) => {
          e.preventDefault();
          go({ ...filters, q });
        }}
      >
        <label>
          Flow
          <select value={filters.processId} onChange={(e) => go({ ...filters, processId: e.currentTarget.value })}>
            <option value="">every flow</option>
            {(flows.data?.items ?? []).map((f) => (
              <option key={f.processId} value={f.processId}>
                {f.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Title
          <input
            type="search"
            value={q}
            placeholder="words of the title"
            onInput={(e) => setQ(e.currentTarget.value)}
          />
        </label>
        <label>
          Waiting
          <select value={filters.age} onChange={(e) => go({ ...filters, age: e.currentTarget.value })}>
            <option value="">any time</option>
            {Object.entries(AGES).map(([k, a]) => (
              <option key={k} value={k}>
                {a.label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Apply</button>
        <button type="button" onClick={() => go({ processId: '', q: '', age: '' })}>
          Clear
        </button>
      </form>
      <div class={open ? 'tasks-grid with-panel' : 'tasks-grid'}>
        <div>
          <ReadTable
            read={tasks}
            items={shown}
            what="The tasks"
            empty={`No task waits for anyone${total > 0 ? ' among these' : ''}.`}
            class="tasks"
            caption="Tasks waiting for a person, oldest first"
            columns={['Task', 'Flow', 'For', 'Waiting', 'Due']}
            row={(t) => {
              const href = taskHref(t);
              const current = open?.processInstanceId === t.processInstanceId && open.nodeId === t.nodeId;
              return (
                <tr key={`${t.processInstanceId}/${t.nodeInstanceId}`} class={current ? 'current' : undefined}>
                  <th scope="row">
                    <a href={`${href}${taskFiltersToQuery(filters)}`} aria-current={current ? 'true' : undefined}>
                      {t.formTitle ?? t.nodeName}
                    </a>
                    <div class="muted">{`${t.nodeName} · ${t.inputType}`}</div>
                  </th>
                  <td>
                    <a href={`/executions/${encodeURIComponent(t.processInstanceId)}`} title={t.processInstanceId}>
                      {t.processName}
                    </a>
                    {t.correlationKey && <div class="muted">{t.correlationKey}</div>}
                  </td>
                  <td>
                    {t.assignee ?? <span class="muted">anyone</span>}
                    {t.claim !== null && (
                      <div class={t.claim.by === me ? 'muted' : 'tag wait-person'}>
                        {`claimed by ${claimWords(t.claim.by, me, t.claim.name)}`}
                      </div>
                    )}
                  </td>
                  <td>
                    <time dateTime={t.waitingSince} title={formatTime(t.waitingSince)}>
                      {formatDuration(Math.max(0, now - Date.parse(t.waitingSince)))}
                    </time>
                  </td>
                  <td>
                    {t.dueAt ? (
                      <>
                        <time dateTime={t.dueAt}>{formatTime(t.dueAt)}</time>
                        <div class={Date.parse(t.dueAt) < now ? 'countdown overdue' : 'countdown'}>
                          {dueWords(t.dueAt, now, formatDuration)}
                        </div>
                      </>
                    ) : (
                      <span class="muted">no limit</span>
                    )}
                  </td>
                </tr>
              );
            }}
          />
        </div>
        {open && (
          <TaskPanel
            key={`${open.processInstanceId}/${open.nodeId}`}
            processInstanceId={open.processInstanceId}
            nodeId={open.nodeId}
            {...(openTask && { dueAt: openTask.dueAt })}
            {...(openTask?.claim && { claimedByName: openTask.claim.name })}
            mayExecute={mayExecute}
            onAnswered={tasks.reload}
            onClose={() => location.route(`/tasks${taskFiltersToQuery(filters)}`)}
          />
        )}
      </div>
    </>
  );
}
