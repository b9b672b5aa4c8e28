import { Box, Text } from 'ink';
import type { InputField } from '../../shared/flow/inputs.js';
import { cut, fit } from '../format.js';
import { InputLine } from './input-line.js';

/** Inputs listed under the data line at most (the last row counts the rest when there are more). */
const MAX_INPUT_ROWS = 5;
const LABEL = 'data       ';

/**
 * What the form knows of the chosen version's start data: its inputs (`inputs:` read as
 * fields), 'any' when the version declares none, null when no version is chosen (none active).
 */
export type RunInputs = readonly InputField[] | 'any' | null;

/** Rows the inputs take under the data line (the screen leaves them out of its list). Pure. */
export function inputRows(inputs: RunInputs): number {
  if (inputs === null) return 0;
  return inputs === 'any' ? 1 : Math.max(1, Math.min(inputs.length, MAX_INPUT_ROWS));
}

/**
 * `{"orderId": "", "amount": 0}`: the required inputs, each with its default, its first
 * allowed value, or an empty value of its type; null when none is required. Pure.
 */
export function dataTemplate(fields: readonly InputField[]): string | null {
  const required = fields.filter((f) => f.required);
  if (required.length === 0) return null;
  const value = (f: InputField): unknown =>
    f.default !== undefined ? f.default : f.enum?.length ? f.enum[0] : (EMPTY[f.type.split('|')[0]!] ?? null);
  return `{${required.map((f) => `${JSON.stringify(f.name)}: ${JSON.stringify(value(f))}`).join(', ')}}`;
}

const EMPTY: Readonly<Record<string, unknown>> = {
  string: '',
  number: 0,
  integer: 0,
  boolean: false,
  array: [],
  object: {},
};

/**
 * The form that starts a run of a flow: where, which version, the data typed in (its
 * placeholder made from the version's required inputs), the version's inputs under it, and what
 * went wrong.
 */
export function RunForm(props: {
  readonly flowName: string;
  readonly environment: string;
  /** The version active in `environment`, or null when none is. */
  readonly activeVersion: string | null;
  /** 'active', or the version number chosen. */
  readonly version: string;
  /** The chosen version's inputs (see RunInputs). */
  readonly inputs: RunInputs;
  /** The data as typed (a JSON object). */
  readonly data: string;
  /** Why the last enter did not start it (a local check, or the API's `CODE: message`). */
  readonly problem: string | null;
  /** True while the start request is under way. */
  readonly busy: boolean;
  readonly width: number;
}) {
  const { flowName, environment, activeVersion, version, inputs, data, problem, busy, width } = props;
  const fields = Array.isArray(inputs) ? (inputs as readonly InputField[]) : [];
  const template = dataTemplate(fields);
  const placeholder =
    template ?? (fields.length > 0 ? 'a JSON object; every input is optional' : 'a JSON object, e.g. {"orderId": 42}');
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text bold>start a run of {flowName}</Text>
      <Text>
        <Text bold>environment</Text> {environment}{' '}
        {activeVersion ? (
          <Text dimColor>(active v{activeVersion})</Text>
        ) : (
          <Text color="yellow">(no active version: pick one with ← →)</Text>
        )}
      </Text>
      <Text>
        <Text bold>version </Text>{' '}
        {version === 'active' ? `the active one${activeVersion ? ` (v${activeVersion})` : ''}` : `v${version}`}
      </Text>
      <InputLine
        label={LABEL}
        value={data}
        width={width}
        placeholder={cut(placeholder, Math.max(10, width - LABEL.length - 4))}
      />
      {inputs !== null && <Inputs inputs={inputs} width={width} />}
      {busy && <Text dimColor>starting…</Text>}
      {problem && !busy && <Text color="red">✖ {problem}</Text>}
    </Box>
  );
}

/** The inputs, a line each: name, type (or the allowed values), required or optional, description and default. */
function Inputs({ inputs, width }: { readonly inputs: Exclude<RunInputs, null>; readonly width: number }) {
  const label = <Text bold>{'inputs     '}</Text>;
  if (inputs === 'any' || inputs.length === 0)
    return (
      <Text>
        {label}{' '}
        <Text dimColor>{inputs === 'any' ? 'any JSON object (this version declares no inputs)' : 'none listed'}</Text>
      </Text>
    );
  const more = inputs.length > MAX_INPUT_ROWS ? inputs.length - (MAX_INPUT_ROWS - 1) : 0;
  const shown = more ? inputs.slice(0, MAX_INPUT_ROWS - 1) : inputs;
  const typeOf = (f: InputField) => (f.enum ? f.enum.map((v) => JSON.stringify(v)).join('|') : f.type);
  const nameWidth = Math.min(18, Math.max(...shown.map((f) => f.name.length)));
  const typeWidth = Math.min(16, Math.max(...shown.map((f) => typeOf(f).length)));
  const room = Math.max(10, width - LABEL.length - 1);
  return (
    <Box flexDirection="column">
      {shown.map((f, i) => (
        <Text key={f.name}>
          {i === 0 ? label : ' '.repeat(LABEL.length)}{' '}
          {cut(
            [
              fit(f.name, nameWidth),
              fit(typeOf(f), typeWidth),
              f.required ? 'required' : 'optional',
              `${f.description ?? ''}${f.default !== undefined ? `${f.description ? ' ' : ''}(default ${JSON.stringify(f.default)})` : ''}`,
            ]
              .join('  ')
              .trimEnd(),
            room,
          )}
        </Text>
      ))}
      {more > 0 && (
        <Text dimColor>
          {' '.repeat(LABEL.length)} … {more} more (wfx flow show lists them all)
        </Text>
      )}
    </Box>
  );
}
