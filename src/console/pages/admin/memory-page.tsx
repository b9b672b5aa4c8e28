/*
 * /manage/memory — what memoryActions and aiTasks' chat memory remember (permission ADMIN): the
 * namespaces with their entries and bytes (GET /admin/memory/namespaces), and with `?namespace=`
 * that namespace's entries, a page at a time, each one's value on demand and a delete (asked
 * first). A system admin chooses the organization (`?organization=`, default `default`).
 */
import { useLocation } from 'preact-iso/router';
import { useEffect, useState } from 'preact/hooks';
import { calls, type Org } from '../../../shared/api/calls/index.js';
import type { MemoryEntryView, MemoryItem } from '../../../shared/api/memory.js';
import { send } from '../../api/http.js';
import { adminPage } from '../../components/admin-shell.js';
import { ConfirmDialog } from '../../components/confirm-dialog.js';
import { JsonBlock } from '../../components/json-block.js';
import { LoadMore } from '../../components/load-more.js';
import { ReadTable } from '../../components/read-table.js';
import { SaidNote } from '../../components/said-note.js';
import { useApi } from '../../hooks/use-api.js';
import { usePages } from '../../hooks/use-pages.js';
import { useSaid } from '../../hooks/use-said.js';
import { formatTime } from '../../model/format.js';
import { ADMIN_BASE } from '../../model/admin-pages.js';

/** Entries per page of a namespace. */
const PAGE = 100;

/** `?organization=` of a system admin's reads; none for an organization's own (''). */
const orgOf = (org: string): Org => (org === '' ? {} : { organization: org });
/** The page's own address for `namespace` (null: the namespaces) in `org`. */
function memoryHref(org: string, namespace: string | null): string {
  const q = new URLSearchParams();
  if (org !== '') q.set('organization', org);
  if (namespace !== null) q.set('namespace', namespace);
  const text = q.toString();
  return `${ADMIN_BASE}/memory${text ? `?${text}` : ''}`;
}

function Namespaces({ org }: { readonly org: string }) {
  const list = useApi(calls.memory.namespaces(orgOf(org)));
  const items = list.data?.items ?? [];
  return (
    <section aria-labelledby="namespaces-title">
      <h2 id="namespaces-title">Namespaces</h2>
      <ReadTable
        read={list}
        items={items}
        what="The memory"
        empty="Nothing remembered."
        class="namespaces"
        caption="Memory namespaces"
        columns={['Namespace', 'Entries', 'Size']}
        row={(n) => (
          <tr key={n.namespace} data-namespace={n.namespace}>
            <th scope="row">
              <a href={memoryHref(org, n.namespace)}>{n.namespace}</a>
            </th>
            <td>{n.entries}</td>
            <td>{`${n.bytes} B`}</td>
          </tr>
        )}
      />
    </section>
  );
}

/** A namespace's entries (rendered anew for another namespace or organization: see Memory). */
function Entries({ org, namespace }: { readonly org: string; readonly namespace: string }) {
  const pages = usePages((cursor) => calls.memory.list({ namespace, limit: PAGE, cursor, ...orgOf(org) }));
  /** Entries deleted here, left out of the pages read before. */
  const [gone, setGone] = useState<ReadonlySet<string>>(new Set());
  const [shown, setShown] = useState<MemoryEntryView | null>(null);
  const [deleting, setDeleting] = useState<MemoryItem | null>(null);
  const { said, attempt } = useSaid();
  const items = pages.items.filter((i) => !gone.has(i.key));
  const view = (i: MemoryItem) =>
    attempt(
      async () => setShown(await send(calls.memory.get(i.namespace, i.key, orgOf(org)))),
      null,
      `${i.key} cannot be read`,
    );
  const remove = async (yes: boolean) => {
    const i = deleting;
    setDeleting(null);
    if (!yes || !i) return;
    const deleted = await attempt(
      () => send(calls.memory.delete(i.namespace, i.key, orgOf(org))),
      `${i.key} deleted.`,
      `${i.key} was not deleted`,
    );
    if (!deleted) return;
    setGone((g) => new Set(g).add(i.key));
    if (shown?.key === i.key) setShown(null);
  };
  return (
    <section aria-labelledby="entries-title">
      <h2 id="entries-title">{`Entries of ${namespace}`}</h2>
      <p>
        <a href={memoryHref(org, null)}>All namespaces</a>
      </p>
      <SaidNote said={said} />
      <ReadTable
        read={pages}
        items={items}
        what="The entries"
        empty="No entries."
        class="memory-entries"
        caption={`Entries of the namespace ${namespace}`}
        columns={['Key', 'Size', 'Updated', 'Expires', { hidden: 'Actions' }]}
        row={(i) => (
          <tr key={i.key} data-key={i.key}>
            <th scope="row">
              <code>{i.key}</code>
            </th>
            <td>{`${i.size} B`}</td>
            <td>{formatTime(i.updatedAt)}</td>
            <td>{i.expiresAt ? formatTime(i.expiresAt) : <span class="muted">never</span>}</td>
            <td class="row-actions">
              <button type="button" onClick={() => void view(i)} aria-label={`Show the value of ${i.key}`}>
                Show
              </button>
              <button type="button" onClick={() => setDeleting(i)} aria-label={`Delete ${i.key}`}>
                Delete
              </button>
            </td>
          </tr>
        )}
      />
      {pages.more && <LoadMore onLoad={pages.loadMore} />}
      {shown && (
        <section class="panel memory-value" aria-labelledby="value-title">
          <h3 id="value-title">{`Value of ${shown.key}`}</h3>
          <JsonBlock value={shown.value} label={`The value of ${shown.key}`} empty="null or empty." />
        </section>
      )}
      <ConfirmDialog
        open={deleting !== null}
        title="Delete this entry?"
        message={deleting ? `The entry ${deleting.key} of ${namespace} is forgotten for good.` : ''}
        confirm="Delete entry"
        dismiss="Keep it"
        onAnswer={(yes) => void remove(yes)}
      />
    </section>
  );
}

function Memory({ system }: { readonly system: boolean }) {
  const { query, route } = useLocation();
  const org = system ? (query.organization ?? '') : '';
  const namespace = query.namespace ?? null;
  const [orgText, setOrgText] = useState(org);
  useEffect(() => setOrgText(org), [org]);
  return (
    <>
      {system && (
        <form
          class="inline-form"
          role="search"
          aria-label="Organization"
          onSubmit={(e) => {
            e.preventDefault();
            route(memoryHref(orgText.trim(), null));
          }}
        >
          <label for="memory-org">Organization</label>
          <input
            id="memory-org"
            value={orgText}
            placeholder="default"
            onInput={(e) => setOrgText(e.currentTarget.value)}
          />
          <button type="submit">Show</button>
        </form>
      )}
      {namespace === null ? (
        <Namespaces org={org} />
      ) : (
        <Entries key={`${org}/${namespace}`} org={org} namespace={namespace} />
      )}
    </>
  );
}

/** The memory page. */
export default adminPage('Memory', 'ADMIN', (me) => <Memory system={me.system} />);
