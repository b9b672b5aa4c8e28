/* The executions list's filters: a form whose every field is a query parameter of the page. */
import type { TargetedEvent } from 'preact';
import { useRef } from 'preact/hooks';
import {
  ENVIRONMENT_NAMES,
  filtersFromQuery,
  fromLocalInput,
  hasFilters,
  toLocalInput,
  WAITING_CHOICES,
  type Filters,
} from '../model/filters.js';
import { EXECUTION_STATES, STATE_NAMES } from '../model/states.js';

/** Props of FiltersForm. */
type Props = {
  readonly filters: Filters;
  /** The flows to offer (process id and name). */
  readonly flows: readonly { readonly processId: string; readonly name: string }[];
  /** Called with the filters the form holds when it is submitted (or a choice changed). */
  readonly onApply: (filters: Filters) => void;
};

/** The form's id: `/` focuses its first field (pages/executions-page.tsx). */
export const FILTERS_FORM_ID = 'filters';

/** Props of ChoiceFilter. */
type ChoiceProps<T extends string> = {
  readonly label: string;
  /** The query parameter. */
  readonly name: string;
  /** The value chosen now; undefined: any. */
  readonly value: T | undefined;
  readonly values: readonly T[];
  /** What a value reads as. */
  readonly text: (value: T) => string;
  readonly onChange: () => void;
};

/** A filter chosen from a few values (or any), applied as soon as it changes. */
function ChoiceFilter<T extends string>({ label, name, value, values, text, onChange }: ChoiceProps<T>) {
  return (
    <label>
      {label}
      <select name={name} defaultValue={value ?? ''} onChange={onChange}>
        <option value="">any</option>
        {values.map((v) => (
          <option key={v} value={v}>
            {text(v)}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The filters as a form. */
export function FiltersForm({ filters, flows, onApply }: Props) {
  const form = useRef<HTMLFormElement>(null);
  const submit = (e: TargetedEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    const text = (k: string) => String(data.get(k) ?? '');
    onApply(
      filtersFromQuery({
        processId: text('processId'),
        version: text('version'),
        environment: text('environment'),
        state: text('state'),
        errorCode: text('errorCode'),
        failedNode: text('failedNode'),
        correlationKey: text('correlationKey'),
        waiting: text('waiting'),
        where: text('where'),
        startedAfter: fromLocalInput(text('startedAfter')),
        startedBefore: fromLocalInput(text('startedBefore')),
      }),
    );
  };
  const choose = () => form.current?.requestSubmit();
  return (
    <form
      id={FILTERS_FORM_ID}
      class="filters"
      ref={form}
      onSubmit={submit}
      role="search"
      aria-label="Filter executions"
    >
      <label>
        Flow
        <input
          name="processId"
          list="flow-ids"
          defaultValue={filters.processId ?? ''}
          placeholder="any"
          autocomplete="off"
        />
        <datalist id="flow-ids">
          {flows.map((f) => (
            <option key={f.processId} value={f.processId}>
              {f.name}
            </option>
          ))}
        </datalist>
      </label>
      <label>
        Version
        <input
          name="version"
          inputMode="numeric"
          pattern="[0-9]*"
          size={5}
          defaultValue={filters.version ?? ''}
          placeholder="any"
        />
      </label>
      <ChoiceFilter
        label="Environment"
        name="environment"
        value={filters.environment}
        values={ENVIRONMENT_NAMES}
        text={(e) => e.toLowerCase()}
        onChange={choose}
      />
      <ChoiceFilter
        label="State"
        name="state"
        value={filters.state}
        values={STATE_NAMES}
        text={(s) => EXECUTION_STATES[s].word}
        onChange={choose}
      />
      <ChoiceFilter
        label="Waiting"
        name="waiting"
        value={filters.waiting}
        values={WAITING_CHOICES.map(([v]) => v)}
        text={(v) => WAITING_CHOICES.find(([w]) => w === v)![1]}
        onChange={choose}
      />
      <label>
        Failure code
        <input name="errorCode" defaultValue={filters.errorCode ?? ''} placeholder="any" autocomplete="off" />
      </label>
      <label>
        Failed at node
        <input name="failedNode" defaultValue={filters.failedNode ?? ''} placeholder="any" autocomplete="off" />
      </label>
      <label>
        Correlation key
        <input name="correlationKey" defaultValue={filters.correlationKey ?? ''} placeholder="any" autocomplete="off" />
      </label>
      <label>
        Search
        <input
          name="where"
          defaultValue={filters.where ?? ''}
          placeholder="orderId=A-1002"
          title="A search attribute of the flow's search: name=value"
          autocomplete="off"
        />
      </label>
      <label>
        Started after
        <input type="datetime-local" name="startedAfter" defaultValue={toLocalInput(filters.startedAfter)} />
      </label>
      <label>
        Started before
        <input type="datetime-local" name="startedBefore" defaultValue={toLocalInput(filters.startedBefore)} />
      </label>
      <div class="filter-buttons">
        <button type="submit">Apply</button>
        {hasFilters(filters) && (
          <a class="button-link" href="/executions">
            Clear
          </a>
        )}
      </div>
    </form>
  );
}
