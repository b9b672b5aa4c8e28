import { Box, Text, useInput } from 'ink';
import { useRef, useState } from 'react';
import { FlowView } from '../components/flow-view.js';
import { FlowsTable } from '../components/flows-table.js';
import { KeyBar } from '../components/key-bar.js';
import { inputRows, RunForm, type RunInputs } from '../components/run-form.js';
import { inputFields } from '../../shared/flow/inputs.js';
import { parseJsonObject } from '../../shared/json-object.js';
import { errorText } from '../error-text.js';
import { environmentsOf, useFlows, type FlowSummary } from '../hooks/use-flows.js';
import { useWidth } from '../hooks/use-width.js';
import { editText } from '../text-edit.js';
import { SHELL_KEYS, type ScreenProps } from './screen.js';
import { cursorAt, moveCursor } from '../cursor.js';
import { useNotice } from '../hooks/use-notice.js';

/** The run form while it is open. */
interface Form {
  readonly processId: string;
  /** Index into the environments. */
  readonly env: number;
  /** 'active', or a version number. */
  readonly version: string;
  readonly data: string;
  readonly problem: string | null;
  readonly busy: boolean;
}

/**
 * The flows screen: the flows the credential may read with their latest and active versions;
 * enter opens one (its versions); `r` starts a run of the selected flow with data typed in
 * (checked here first: a JSON object), through the client's process.start.
 */
export function FlowsScreen(props: ScreenProps & { readonly refreshMs?: number }) {
  const { client, rows, active, changes, setCapture, refreshMs } = props;
  const width = useWidth();
  const { data, error } = useFlows(client, changes, refreshMs);
  const flows = data ?? [];
  const environments = environmentsOf(flows);
  const [selected, setSelected] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  const [form, setForm] = useState<Form | null>(null);
  const [notice, setNotice] = useNotice(active);
  const at = cursorAt(selected, flows.length);
  const current: FlowSummary | null = (open ? flows.find((f) => f.processId === open) : flows[at]) ?? null;
  const formFlow = form ? (flows.find((f) => f.processId === form.processId) ?? null) : null;

  // Keys read the latest state through a ref (see ExecutionsScreen): typing fast must not lose characters.
  const latest = useRef({ form, open, current, flows, environments });
  latest.current = { form, open, current, flows, environments };
  const setFormNow = (f: Form | null) => {
    latest.current = { ...latest.current, form: f };
    setForm(f);
  };
  // Each open form and each submit gets a number: a start that answers after its form was closed
  // (esc) or replaced neither closes nor writes into the form open now.
  const formSeq = useRef(0);
  const closeForm = () => {
    formSeq.current++;
    setFormNow(null);
    setCapture(false);
  };

  const submit = (f: Form) => {
    const flow = latest.current.flows.find((x) => x.processId === f.processId);
    let input: Record<string, unknown>;
    try {
      input = f.data.trim() === '' ? {} : parseJsonObject(f.data, 'data'); // nothing typed: no data
    } catch (err) {
      return setFormNow({ ...f, problem: (err as Error).message });
    }
    const environment = latest.current.environments[f.env]!;
    setFormNow({ ...f, busy: true, problem: null });
    const mine = ++formSeq.current;
    client.process
      .start({
        processId: f.processId,
        data: input,
        environment,
        ...(f.version !== 'active' && { version: f.version }),
      })
      .then(
        (started) => {
          if (mine !== formSeq.current) return;
          closeForm();
          setNotice(
            `started ${started.processInstanceId} · ${flow?.name ?? f.processId} · ${environment}${f.version === 'active' ? '' : ` v${f.version}`}`,
          );
        },
        (err: unknown) => {
          const now = latest.current.form;
          if (mine === formSeq.current && now) setFormNow({ ...now, busy: false, problem: errorText(err) });
        },
      );
  };

  useInput(
    (input, key) => {
      const { form, open, current, flows, environments } = latest.current;
      if (form) {
        if (key.escape) return closeForm();
        if (form.busy) return;
        if (key.return) return submit(form);
        const flow = flows.find((f) => f.processId === form.processId);
        if (key.tab) return setFormNow({ ...form, env: (form.env + 1) % environments.length });
        if (key.upArrow || key.downArrow || key.leftArrow || key.rightArrow) {
          const choices = [
            'active',
            ...[...(flow?.versions ?? [])].map((v) => v.version).sort((a, b) => Number(b) - Number(a)),
          ];
          const i = choices.indexOf(form.version);
          return setFormNow({
            ...form,
            version: choices[(i + (key.downArrow || key.rightArrow ? 1 : choices.length - 1)) % choices.length]!,
          });
        }
        const data = editText(form.data, input, key);
        if (data !== form.data) setFormNow({ ...form, data, problem: null });
        return;
      }
      if (input === 'r' && current) {
        setNotice(null);
        formSeq.current++;
        setFormNow({ processId: current.processId, env: 0, version: 'active', data: '', problem: null, busy: false });
        return setCapture(true);
      }
      if (open) {
        if (key.escape || key.backspace || key.leftArrow) setOpen(null);
        return;
      }
      setSelected((s) => moveCursor(s, flows.length, input, key));
      if (key.return && current) setOpen(current.processId);
    },
    { isActive: active },
  );

  const keys: Array<readonly [string, string]> = form
    ? [
        ['enter', 'start'],
        ['tab', 'environment'],
        ['← →', 'version'],
        ['ctrl-u', 'clear'],
        ['esc', 'cancel'],
      ]
    : open
      ? [['esc', 'back'], ['r', 'run'], ...SHELL_KEYS]
      : [['↑↓', 'move'], ['enter', 'versions'], ['r', 'run'], ...SHELL_KEYS];
  const inputs = form ? chosenInputs(formFlow, environments[form.env]!, form.version) : null;
  const formRows = form ? 7 + inputRows(inputs) : 0;
  return (
    <Box flexDirection="column">
      {error && <Text color={data ? 'yellow' : 'red'}>✖ cannot read the flows: {error.text}</Text>}
      {!data && !error ? (
        <Text dimColor>loading flows…</Text>
      ) : open && current ? (
        <FlowView flow={current} environments={environments} rows={Math.max(1, rows - 7 - formRows)} />
      ) : open ? (
        <Text dimColor>flow {open} is no longer there</Text>
      ) : (
        <FlowsTable
          flows={flows}
          environments={environments}
          selected={at}
          rows={Math.max(3, rows - 4 - formRows)}
          width={width}
        />
      )}
      {form && (
        <RunForm
          flowName={formFlow?.name ?? form.processId}
          environment={environments[form.env]!}
          activeVersion={formFlow?.active[environments[form.env]!] ?? null}
          version={form.version}
          inputs={inputs}
          data={form.data}
          problem={form.problem}
          busy={form.busy}
          width={width}
        />
      )}
      {notice && !form && <Text color="green">✔ {notice}</Text>}
      <KeyBar keys={keys} />
    </Box>
  );
}

/** The inputs of the version the run form would start: the environment's active one, or the one chosen. */
function chosenInputs(flow: FlowSummary | null, environment: string, version: string): RunInputs {
  const chosen = version === 'active' ? (flow?.active[environment] ?? null) : version;
  const info = chosen === null ? undefined : flow?.versions.find((v) => v.version === chosen);
  if (!info) return null;
  return info.inputs === undefined ? 'any' : inputFields(info.inputs);
}
