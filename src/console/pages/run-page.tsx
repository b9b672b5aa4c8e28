/*
 * /flows/:processId/run — start an execution of a flow: the environment, the version (the one
 * active there, or one chosen), a correlation key, and the start data as a form generated from
 * the version's `inputs:` (a JSON text without them). Each field is checked in the page as the
 * daemon checks it (shared/flow/input-fields.ts); a refusal of the daemon that names a field
 * is shown at that field. Started, the new execution opens on its page.
 */
import { useLocation, useRoute } from 'preact-iso/router';
import { useMemo, useState } from 'preact/hooks';
import type { Environment } from '../../shared/api/common.js';
import { calls } from '../../shared/api/calls/index.js';
import { errorMessage } from '../../shared/errors.js';
import { checkForm, fieldOfPath, formInputs, formText, type FormInput } from '../../shared/flow/input-fields.js';
import { ApiError, send } from '../api/http.js';
import { InputFields, inputId } from '../components/input-fields.js';
import { ReadState } from '../components/read-state.js';
import { useApi } from '../hooks/use-api.js';
import { useSession } from '../hooks/use-session.js';
import { useTitle } from '../hooks/use-title.js';
import { ENVIRONMENT_NAMES } from '../model/filters.js';

/** The texts a form starts with: each field's default. */
const initialTexts = (fields: readonly FormInput[]): Record<string, string> =>
  Object.fromEntries(fields.map((f) => [f.name, formText(f, f.default)]));

/** The run page. */
export default function RunPage() {
  const { params, query } = useRoute();
  const { route } = useLocation();
  const processId = params.processId ?? '';
  const flows = useApi(calls.flows.list());
  const me = useSession();
  const flow = flows.data?.items.find((f) => f.processId === processId);
  const [environment, setEnvironment] = useState<Environment>(
    (ENVIRONMENT_NAMES as readonly string[]).includes(query.environment ?? '')
      ? (query.environment as Environment)
      : 'PRODUCTION',
  );
  const [chosen, setChosen] = useState(/^[0-9]+$/.test(query.version ?? '') ? query.version! : '');
  const [correlationKey, setCorrelationKey] = useState('');
  const [texts, setTexts] = useState<Record<string, string> | null>(null);
  const [dataText, setDataText] = useState('{}');
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<string | null>(null);
  const [starting, setStarting] = useState(false);
  useTitle(flow ? `Run ${flow.name}` : 'Run');

  const active = flow?.active[environment];
  const version = chosen !== '' ? chosen : (active ?? flow?.versions.at(-1)?.version ?? '');
  const inputs = flow?.versions.find((v) => v.version === version)?.inputs;
  const fields = useMemo(() => formInputs(inputs), [inputs]);
  const shown = texts ?? initialTexts(fields);

  if (flows.error || !flows.data) return <ReadState read={flows} what="The flows" />;
  if (!me.data) return <ReadState read={me} what="Who you are" />;
  if (!flow)
    return (
      <>
        <h1>Run a flow</h1>
        <p role="alert" class="error-text">{`There is no flow ${processId} this session may see.`}</p>
      </>
    );
  const mayExecute = me.data.permissions.includes('WORKFLOW_EXECUTE');

  const start = async (e: Event) => {
    e.preventDefault();
    setFailure(null);
    let data: Record<string, unknown>;
    if (inputs !== undefined) {
      const checked = checkForm(fields, shown);
      setProblems(Object.fromEntries(Object.entries(checked.problems).map(([name, p]) => [name, `${name} ${p}`])));
      const first = fields.find((f) => checked.problems[f.name] !== undefined);
      if (first) {
        document.getElementById(inputId(first.name))?.focus();
        return;
      }
      data = checked.data;
    } else {
      try {
        data = JSON.parse(dataText) as Record<string, unknown>;
      } catch {
        data = null as unknown as Record<string, unknown>;
      }
      if (typeof data !== 'object' || data === null || Array.isArray(data)) {
        setFailure('The start data must be a JSON object.');
        return;
      }
    }
    setStarting(true);
    try {
      const query = { environment, ...(chosen !== '' && { versionNumber: chosen }) };
      const body = { processId, ...(correlationKey.trim() !== '' && { correlationKey: correlationKey.trim() }), data };
      const started = await send(
        me.data!.system ? calls.process.startAny(body, query) : calls.process.exec(body, query),
      );
      route(`/executions/${encodeURIComponent(started.processInstanceId)}`);
    } catch (err) {
      setStarting(false);
      const at =
        err instanceof ApiError && typeof err.details?.path === 'string'
          ? fieldOfPath(
              err.details.path,
              fields.map((f) => f.name),
            )
          : null;
      if (at !== null && err instanceof ApiError) {
        // `data.customer.id is required (the inputs of flow …)`: the path from the field on.
        const message = err.message.replace(/^data\./, '').replace(/\s\(the inputs of flow .*\)$/, '');
        setProblems({ [at]: message });
        document.getElementById(inputId(at))?.focus();
      } else setFailure(`The daemon did not start it: ${errorMessage(err)}`);
    }
  };

  return (
    <>
      <div class="page-head">
        <h1>{`Run ${flow.name}`}</h1>
        <span class="muted">{flow.processId}</span>
      </div>
      {!mayExecute ? (
        <p role="alert" class="error-text">
          This session may not start executions (it lacks WORKFLOW_EXECUTE).
        </p>
      ) : (
        <form class="run-form" noValidate onSubmit={(e) => void start(e)} aria-label="Start an execution">
          <fieldset>
            <legend id="run-where">Where and which version</legend>
            <label for="run-environment">Environment</label>
            <select
              id="run-environment"
              value={environment}
              onChange={(e) => {
                setEnvironment(e.currentTarget.value as Environment);
                setTexts(null);
              }}
            >
              {ENVIRONMENT_NAMES.map((env) => (
                <option
                  key={env}
                  value={env}
                >{`${env.toLowerCase()}${flow.active[env] ? ` (v${flow.active[env]} active)` : ''}`}</option>
              ))}
            </select>
            <label for="run-version">Version</label>
            <select
              id="run-version"
              value={chosen}
              onChange={(e) => {
                setChosen(e.currentTarget.value);
                setTexts(null);
                setProblems({});
              }}
            >
              <option value="">{active ? `the active one (v${active})` : 'the active one (none)'}</option>
              {[...flow.versions].reverse().map((v) => (
                <option key={v.version} value={v.version}>{`version ${v.version}`}</option>
              ))}
            </select>
            <label for="run-correlation">Correlation key</label>
            <input
              id="run-correlation"
              type="text"
              value={correlationKey}
              onInput={(e) => setCorrelationKey(e.currentTarget.value)}
              aria-describedby="run-correlation-hint"
            />
            <p id="run-correlation-hint" class="hint muted">
              Optional: events and lookups find the execution by it (an order number, say).
            </p>
          </fieldset>
          <fieldset>
            <legend>{`Start data of version ${version}`}</legend>
            {inputs === undefined ? (
              <>
                <label for="run-data">Variables, as a JSON object</label>
                <textarea
                  id="run-data"
                  rows={6}
                  spellcheck={false}
                  value={dataText}
                  onInput={(e) => setDataText(e.currentTarget.value)}
                  aria-describedby="run-data-hint"
                />
                <p id="run-data-hint" class="hint muted">
                  This version declares no inputs: any object is taken, each key a variable.
                </p>
              </>
            ) : fields.length === 0 ? (
              <p class="muted">This version takes no start data.</p>
            ) : (
              <InputFields
                fields={fields}
                texts={shown}
                problems={problems}
                onChange={(name, text) => {
                  setTexts({ ...shown, [name]: text });
                  if (problems[name]) setProblems(({ [name]: _gone, ...rest }) => rest);
                }}
              />
            )}
          </fieldset>
          {Object.keys(problems).length > 0 && (
            <p role="alert" class="error-text">
              {`${Object.keys(problems).length === 1 ? 'One field needs' : `${Object.keys(problems).length} fields need`} a change before it can start.`}
            </p>
          )}
          {failure && (
            <p role="alert" class="error-text">
              {failure}
            </p>
          )}
          <button type="submit" class="primary" disabled={starting}>
            {starting ? 'Starting…' : 'Start execution'}
          </button>
        </form>
      )}
    </>
  );
}
