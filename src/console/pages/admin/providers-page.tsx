/*
 * /manage/providers — the model providers aiTasks call (GET /admin/ai-providers: permission
 * ADMIN): kind, model, where it is, whether it is the default and has a key, and a Test that sends
 * a one-line prompt. The API never gives a key, so none can reach the page.
 */
import { useState } from 'preact/hooks';
import type { ProviderTested, ProviderView } from '../../../shared/api/ai-providers.js';
import { calls } from '../../../shared/api/calls/index.js';
import { ApiError, send } from '../../api/http.js';
import { adminPage } from '../../components/admin-shell.js';
import { ReadTable } from '../../components/read-table.js';
import { useApi } from '../../hooks/use-api.js';
import { formatTime } from '../../model/format.js';

/** A test's outcome, per provider. */
type Tested = { readonly ok: true; readonly answer: ProviderTested } | { readonly ok: false; readonly code: string };

function TestResult({ tested }: { readonly tested: Tested | 'testing' | undefined }) {
  if (tested === undefined) return null;
  if (tested === 'testing') return <span class="muted">Testing…</span>;
  if (tested.ok)
    return (
      <span class="badge state-completed">{`answered in ${tested.answer.latencyMs} ms (${tested.answer.model})`}</span>
    );
  return <span class="badge state-failed">{`failed: ${tested.code}`}</span>;
}

function ProviderRow(props: {
  readonly p: ProviderView;
  readonly showOrg: boolean;
  readonly tested: Tested | 'testing' | undefined;
  readonly onTest: () => void;
}) {
  const { p } = props;
  return (
    <tr data-provider={p.name}>
      <th scope="row">
        {p.name}
        {p.isDefault && <span class="tag">default</span>}
      </th>
      {props.showOrg && <td>{p.organization}</td>}
      <td>{p.kind}</td>
      <td>
        <code>{p.model}</code>
      </td>
      <td>{p.kind === 'local' ? <code>{p.modelPath}</code> : <code>{p.baseUrl}</code>}</td>
      <td>{p.hasApiKey ? 'set (never shown)' : <span class="muted">none</span>}</td>
      <td>{formatTime(p.updatedAt)}</td>
      <td aria-live="polite">
        <button
          type="button"
          onClick={props.onTest}
          disabled={props.tested === 'testing'}
          aria-label={`Test ${p.name}`}
        >
          Test
        </button>{' '}
        <TestResult tested={props.tested} />
      </td>
    </tr>
  );
}

function Providers({ system }: { readonly system: boolean }) {
  const providers = useApi(calls.aiProviders.list());
  const [tests, setTests] = useState<Readonly<Record<string, Tested | 'testing'>>>({});
  const items = providers.data?.items ?? [];
  const test = async (p: ProviderView) => {
    const id = `${p.organization}/${p.name}`;
    setTests((t) => ({ ...t, [id]: 'testing' }));
    let outcome: Tested;
    try {
      const answer = await send(calls.aiProviders.test(p.name, { organization: p.organization }));
      outcome = { ok: true, answer };
    } catch (e) {
      const code = e instanceof ApiError ? String(e.details?.code ?? e.code) : 'NETWORK';
      outcome = { ok: false, code };
    }
    setTests((t) => ({ ...t, [id]: outcome }));
  };
  return (
    <>
      <ReadTable
        read={providers}
        items={items}
        what="The providers"
        empty="No model provider registered (wfx ai providers create)."
        class="providers"
        caption="Model providers"
        columns={[
          'Provider',
          system && 'Organization',
          'Kind',
          'Model',
          'Base URL or model file',
          'API key',
          'Updated',
          'State',
        ]}
        row={(p) => (
          <ProviderRow
            key={p.providerId}
            p={p}
            showOrg={system}
            tested={tests[`${p.organization}/${p.name}`]}
            onTest={() => void test(p)}
          />
        )}
      />
    </>
  );
}

/** The model providers page. */
export default adminPage('Model providers', 'ADMIN', (me) => <Providers system={me.system} />);
