/*
 * /manage/memory — what memoryActions and aiTasks' chat memory remember (permission ADMIN): the
 * namespaces with their entries and bytes (GET /admin/memory/namespaces), and with `?namespace=`
 * that namespace's entries, a page at a time, each one's value on demand and a delete (asked
 * first). A system admin chooses the organization (`?organization=`, default `default`).
 */
import { useLocation } from 'preact-iso/router';
import { useEffect, useState } from 'preact/hooks';
import type { MemoryEntryView, MemoryItem, MemoryNamespaces, MemoryPage } from '../../../shared/api/memory.js';
import { api, path } from '../../api/http.js';
import { AdminShell } from '../../components/admin-shell.js';
import { ConfirmDialog } from '../../components/confirm-dialog.js';
import { JsonBlock } from '../../components/json-block.js';
import { useApi } from '../../hooks/use-api.js';
import { formatTime } from '../../model/format.js';
import { ADMIN_BASE } from '../../model/admin-pages.js';

/** Entries per page of a namespace. */
const PAGE = 100;

/** `?organization=` for a system admin's reads, '' for an organization's own. */
const orgQuery = (org: string) => (org === '' ? '' : `organization=${encodeURIComponent(org)}`);
/** The page's own address for `namespace` (null: the namespaces) in `org`. */
function memoryHref(org: string, namespace: string | null): string {
  const q = new URLSearchParams();
  if (org !== '') q.set('organization', org);
  if (namespace !== null) q.set('namespace', namespace);
  const text = q.toString();
  return `${ADMIN_BASE}/memory${text ? `?${text}` : ''}`;
}

function Namespaces({ org }: { readonly org: string }) {
  const list = useApi<MemoryNamespaces>(`/admin/memory/namespaces${org ? `?${orgQuery(org)}` : ''}`);
  const items = list.data?.items ?? [];
  return (
    <section aria-labelledby="namespaces-title">
      <h2 id="namespaces-title">Namespaces</h2>
      {list.error && <p role="alert" class="error-text">{`The memory cannot be read: ${list.error.message}`}</p>}
      {!list.data && !list.error && <p class="muted">Loading…</p>}
      {list.data && items.length === 0 && <p class="muted">Nothing remembered.</p>}
      {items.length > 0 && (
        <table class="namespaces">
          <caption class="visually-hidden">Memory namespaces</caption>
          <thead>
            <tr>
              <th scope="col">Namespace</th>
              <th scope="col">Entries</th>
              <th scope="col">Size</th>
            </tr>
          </thead>
          <tbody>
            {items.map((n) => (
              <tr key={n.namespace} data-namespace={n.namespace}>
                <th scope="row">
                  <a href={memoryHref(org, n.namespace)}>{n.namespace}</a>
                </th>
                <td>{n.entries}</td>
                <td>{`${n.bytes} B`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Entries({ org, namespace }: { readonly org: string; readonly namespace: string }) {
  const [items, setItems] = useState<readonly MemoryItem[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [state, setState] = useState<'loading' | 'ready' | Error>('loading');
  const [shown, setShown] = useState<MemoryEntryView | null>(null);
  const [deleting, setDeleting] = useState<MemoryItem | null>(null);
  const [said, setSaid] = useState('');
  const base = `/admin/memory?namespace=${encodeURIComponent(namespace)}&limit=${PAGE}${org ? `&${orgQuery(org)}` : ''}`;
  const load = async (after: string | null) => {
    setState('loading');
    try {
      const page = await api<MemoryPage>(after === null ? base : `${base}&cursor=${encodeURIComponent(after)}`);
      setItems((old) => (after === null ? page.items : [...old, ...page.items]));
      setCursor(page.nextCursor);
      setState('ready');
    } catch (e) {
      setState(e instanceof Error ? e : new Error(String(e)));
    }
  };
  useEffect(() => {
    setShown(null);
    void load(null);
  }, [base]);
  const entryPath = (i: { namespace: string; key: string }) =>
    `${path`/admin/memory/${i.namespace}/${i.key}`}${org ? `?${orgQuery(org)}` : ''}`;
  const view = async (i: MemoryItem) => {
    try {
      setShown(await api<MemoryEntryView>(entryPath(i)));
    } catch (e) {
      setSaid(`${i.key} cannot be read: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  const remove = async (yes: boolean) => {
    const i = deleting;
    setDeleting(null);
    if (!yes || !i) return;
    try {
      await api(entryPath(i), { method: 'DELETE' });
      setItems((old) => old.filter((x) => x.key !== i.key));
      if (shown?.key === i.key) setShown(null);
      setSaid(`${i.key} deleted.`);
    } catch (e) {
      setSaid(`${i.key} was not deleted: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  return (
    <section aria-labelledby="entries-title">
      <h2 id="entries-title">{`Entries of ${namespace}`}</h2>
      <p>
        <a href={memoryHref(org, null)}>All namespaces</a>
      </p>
      <p aria-live="polite" class="muted">
        {said}
      </p>
      {state instanceof Error && (
        <p role="alert" class="error-text">{`The entries cannot be read: ${state.message}`}</p>
      )}
      {state === 'ready' && items.length === 0 && <p class="muted">No entries.</p>}
      {items.length > 0 && (
        <table class="memory-entries">
          <caption class="visually-hidden">{`Entries of the namespace ${namespace}`}</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Size</th>
              <th scope="col">Updated</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((i) => (
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
            ))}
          </tbody>
        </table>
      )}
      {state === 'loading' && <p class="muted">Loading…</p>}
      {cursor !== null && state === 'ready' && (
        <button type="button" class="load-more" onClick={() => void load(cursor)}>
          Load more
        </button>
      )}
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
      {namespace === null ? <Namespaces org={org} /> : <Entries org={org} namespace={namespace} />}
    </>
  );
}

/** The memory page. */
export default function MemoryAdminPage() {
  return (
    <AdminShell title="Memory" needs="ADMIN">
      {(me) => <Memory system={me.system} />}
    </AdminShell>
  );
}
