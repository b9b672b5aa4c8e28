/*
 * The rows of the executions table: each execution a row (a focusable row: Enter or Space opens
 * it, arrows move between rows, right and left open and close its children), its children folded
 * under it.
 */
import type { TargetedKeyboardEvent } from 'preact';
import { useLocation } from 'preact-iso/router';
import type { InstanceSummary } from '../../shared/api/process.js';
import { ExecutionCells } from './execution-cells.js';

/** Props of ExecutionRows. */
type Props = {
  readonly items: readonly InstanceSummary[];
  /** The children shown under each opened row, by the parent's id. */
  readonly children: Readonly<Record<string, readonly InstanceSummary[]>>;
  /** Rows whose children are being read. */
  readonly loading: ReadonlySet<string>;
  readonly onToggle: (id: string, open: boolean) => void;
  /** How deep these rows are (0: top level). */
  readonly depth?: number;
  readonly now: number;
};

/** The table's rows, in the order shown, for arrow keys. */
function rowsOf(el: Element): HTMLElement[] {
  return [...(el.closest('tbody')?.querySelectorAll<HTMLElement>('tr[data-row]') ?? [])];
}

/** One execution's row. */
function Row({
  e,
  open,
  depth,
  loading,
  onToggle,
  now,
}: {
  e: InstanceSummary;
  open: boolean;
  depth: number;
  loading: boolean;
  onToggle: (id: string, open: boolean) => void;
  now: number;
}) {
  const { route } = useLocation();
  const href = `/executions/${encodeURIComponent(e.processInstanceId)}`;
  const onKeyDown = (ev: TargetedKeyboardEvent<HTMLTableRowElement>) => {
    if (ev.target !== ev.currentTarget) return;
    const rows = rowsOf(ev.currentTarget);
    const at = rows.indexOf(ev.currentTarget);
    switch (ev.key) {
      case 'Enter':
      case ' ':
        route(href);
        break;
      case 'ArrowDown':
        rows[at + 1]?.focus();
        break;
      case 'ArrowUp':
        rows[at - 1]?.focus();
        break;
      case 'ArrowRight':
        if (e.childCount > 0 && !open) onToggle(e.processInstanceId, true);
        break;
      case 'ArrowLeft':
        if (open) onToggle(e.processInstanceId, false);
        break;
      default:
        return;
    }
    ev.preventDefault();
  };
  return (
    <tr
      data-row
      tabIndex={0}
      class={`row depth-${Math.min(depth, 5)} ${depth > 0 ? 'child-row' : ''}`}
      aria-label={`${e.processName} ${e.processInstanceId}, ${e.state.toLowerCase()}`}
      onKeyDown={onKeyDown}
      onClick={(ev) => {
        if ((ev.target as Element).closest('a, button')) return;
        route(href);
      }}
    >
      <td class="cell-toggle">
        {e.childCount > 0 && (
          <button
            type="button"
            class="toggle"
            aria-expanded={open}
            aria-label={`${open ? 'Hide' : 'Show'} the ${e.childCount} child execution${e.childCount === 1 ? '' : 's'} of ${e.processInstanceId}`}
            onClick={() => onToggle(e.processInstanceId, !open)}
          >
            {open ? '−' : '+'}
          </button>
        )}
        {loading && <span class="muted"> …</span>}
      </td>
      <td class="cell-id">
        <a href={href} tabIndex={-1}>
          <code>{e.processInstanceId}</code>
        </a>
      </td>
      <td>
        <span class="flow-name" title={e.processId}>
          {e.processName}
        </span>
      </td>
      <td>{e.processVersion}</td>
      <td>{e.environment?.toLowerCase() ?? ''}</td>
      <ExecutionCells e={e} now={now} />
      <td>{e.errorCode ? <code>{e.errorCode}</code> : ''}</td>
    </tr>
  );
}

/** The rows of `items`, each opened row followed by its children's rows. */
export function ExecutionRows({ items, children, loading, onToggle, depth = 0, now }: Props) {
  return (
    <>
      {items.map((e) => {
        const shown = children[e.processInstanceId];
        return [
          <Row
            key={e.processInstanceId}
            e={e}
            open={shown !== undefined}
            depth={depth}
            loading={loading.has(e.processInstanceId)}
            onToggle={onToggle}
            now={now}
          />,
          shown && (
            <ExecutionRows
              key={`${e.processInstanceId}-children`}
              items={shown}
              children={children}
              loading={loading}
              onToggle={onToggle}
              depth={depth + 1}
              now={now}
            />
          ),
        ];
      })}
    </>
  );
}
